import type { SignonContext } from "../context.js";

/** Tells this process's delivery worker, if any, that a change has committed pushes (S14). */
export function pushesCommitted(ctx: SignonContext): void {
  ctx.pushesQueued?.();
}
