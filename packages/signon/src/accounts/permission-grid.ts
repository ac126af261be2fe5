import { grantPermissions, revokePermissions } from "../applications/permissions.js";
import type { RequestOrigin, SignonContext } from "../context.js";
import { pushesCommitted } from "../pushes/queue.js";
import { listLiveApplications, listPermissionsOfUser } from "../repositories/user-form-choices.js";
import type { User } from "../repositories/users.js";
import { isOrganisationScoped, type Actor } from "../web/policy.js";
import { offeredPermissions } from "./offered-permissions.js";

/** One box of the permission grid: a permission of an application, whether the user holds it and whether the actor may change it. */
export interface PermissionBox {
  value: string;
  permission: string;
  held: boolean;
  editable: boolean;
}

/** One application of the grid (retired applications are left out). */
export interface PermissionGridRow {
  applicationId: string;
  applicationName: string;
  boxes: PermissionBox[];
}

/** The value of a box as the form posts it: `<application id>:<permission>`. */
export function boxValue(applicationId: string, permission: string): string {
  return `${applicationId}:${permission}`;
}

async function gridState(ctx: SignonContext, userUid: string) {
  const [applications, held] = await Promise.all([listLiveApplications(ctx.db), listPermissionsOfUser(ctx.db, userUid)]);
  const heldValues = new Set(held.map((row) => boxValue(row.applicationId, row.permission)));
  return { applications, heldValues };
}

/**
 * The permission grid of a user as this actor sees it: the live applications
 * people use where the actor may grant something, with a box for each
 * permission they may grant (superadmins and admins: every permission but
 * those kept out of the web interface, which are shown, disabled, only when
 * held; organisation admins and super organisation admins: the delegatable
 * ones, and nothing else). Saving leaves whatever is not shown as it is.
 */
export async function permissionGrid(ctx: SignonContext, actor: Actor, userUid: string): Promise<PermissionGridRow[]> {
  const { applications, heldValues } = await gridState(ctx, userUid);
  return applications.flatMap((application) => {
    const grantable = offeredPermissions(actor, application);
    // Organisation-scoped administrators see only what they may change; the others also what is held but kept out of the web interface.
    const shown = (box: PermissionBox) => box.editable || (!isOrganisationScoped(actor) && box.held);
    const boxes = application.supportedPermissions
      .map((permission) => ({
        value: boxValue(application.id, permission),
        permission,
        held: heldValues.has(boxValue(application.id, permission)),
        editable: grantable.includes(permission),
      }))
      .filter(shown);
    return boxes.length === 0 ? [] : [{ applicationId: application.id, applicationName: application.name, boxes }];
  });
}

/** What saving the grid did, or why nothing was changed. */
export type GridSaveResult =
  | { ok: true; granted: number; revoked: number }
  /** A box that is not on the grid: an unknown or retired application, or a permission it does not support. */
  | { ok: false; reason: "unknown_box"; value: string }
  /** A box the actor may not change was ticked, or (in a form that says what it showed) cleared. */
  | { ok: false; reason: "not_grantable"; value: string };

/**
 * Saves the grid: `ticked` are the boxes sent by the form. Only the boxes the
 * actor may change count: a held permission they may not change stays as it
 * is (its box is disabled, so browsers do not send it), and ticking one they
 * may not grant, or clearing one they may not revoke (listed in
 * `heldWhenShown` and not ticked), refuses the whole change.
 *
 * With `heldWhenShown` (the boxes the form showed ticked), only what the
 * person changed on the form is saved: a box they ticked is granted, one they
 * cleared is revoked, and every other box stays as it is now, whatever it was
 * when the page was shown. A grid left open in another tab therefore neither
 * revokes what was granted since nor grants again what was revoked since.
 * Without it, the ticked boxes are the whole set the user is to hold.
 *
 * Everything is checked before anything is written; the grants and
 * revocations of every application are then made with `grantPermissions` and
 * `revokePermissions` (which write the audit events, with `origin`, and queue
 * the pushes, S13) in one transaction: a failure part-way changes nothing.
 */
export async function savePermissionGrid(
  ctx: SignonContext,
  actor: Actor,
  user: User,
  ticked: readonly string[],
  origin: RequestOrigin | null = null,
  heldWhenShown?: readonly string[],
): Promise<GridSaveResult> {
  const { applications, heldValues } = await gridState(ctx, user.uid);
  const boxes = new Map<string, { applicationId: string; permission: string; editable: boolean }>();
  for (const application of applications) {
    const grantable = offeredPermissions(actor, application);
    for (const permission of application.supportedPermissions) {
      boxes.set(boxValue(application.id, permission), { applicationId: application.id, permission, editable: grantable.includes(permission) });
    }
  }
  const boxOf = (value: string) => {
    const at = value.indexOf(":");
    return at < 0 ? undefined : boxes.get(boxValue(value.slice(0, at).toLowerCase(), value.slice(at + 1)));
  };
  const wanted = new Set<string>();
  for (const value of ticked) {
    const box = boxOf(value);
    if (!box) return { ok: false, reason: "unknown_box", value };
    if (!box.editable && !heldValues.has(boxValue(box.applicationId, box.permission))) return { ok: false, reason: "not_grantable", value };
    wanted.add(boxValue(box.applicationId, box.permission));
  }
  let shownTicked: Set<string> | undefined;
  if (heldWhenShown !== undefined) {
    shownTicked = new Set();
    for (const value of heldWhenShown) {
      const box = boxOf(value);
      if (!box) return { ok: false, reason: "unknown_box", value };
      shownTicked.add(boxValue(box.applicationId, box.permission));
    }
  }
  // What the form asks for: with what it showed, only the boxes the person ticked or cleared on it.
  const ticks = (value: string) => wanted.has(value) && shownTicked?.has(value) !== true;
  const clears = (value: string) => !wanted.has(value) && (shownTicked === undefined || shownTicked.has(value));
  // The page never shows such a box ticked and changeable, so only a hand-made form clears one: refused as a grant would be.
  for (const value of shownTicked ?? []) {
    if (clears(value) && boxes.get(value)?.editable !== true) return { ok: false, reason: "not_grantable", value };
  }
  const changes = applications.map((application) => {
    const toGrant: string[] = [];
    const toRevoke: string[] = [];
    for (const permission of offeredPermissions(actor, application)) {
      const value = boxValue(application.id, permission);
      if (ticks(value) && !heldValues.has(value)) toGrant.push(permission);
      if (clears(value) && heldValues.has(value)) toRevoke.push(permission);
    }
    return { application: application.name, toGrant, toRevoke };
  });
  const granted = changes.reduce((sum, change) => sum + change.toGrant.length, 0);
  const revoked = changes.reduce((sum, change) => sum + change.toRevoke.length, 0);
  if (granted + revoked === 0) return { ok: true, granted, revoked };
  await ctx.db.transaction(async (tx) => {
    // The delivery worker is woken once, after the whole change has committed.
    const inTx: SignonContext = { ...ctx, db: tx, pushesQueued: undefined };
    for (const { application, toGrant, toRevoke } of changes) {
      if (toGrant.length > 0) await grantPermissions(inTx, { email: user.email, application, permissions: toGrant }, actor.uid, origin);
      if (toRevoke.length > 0) await revokePermissions(inTx, { email: user.email, application, permissions: toRevoke }, actor.uid, origin);
    }
  });
  pushesCommitted(ctx);
  return { ok: true, granted, revoked };
}
