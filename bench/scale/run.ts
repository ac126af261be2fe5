// Size against speed: the reads that grow with the data, at 1k, 100k and 1M people (Sign-on) and learners
// (Completion), each on a database generated through SQL.
//
//   DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres npm run bench -- scale
//
// Each part lives in a module of its own that exports `run()`: ./signon.ts, and ./completion.ts when present.
// BENCH_SCALE_PARTS=signon (or completion) runs one part only (default: both, Sign-on first).
import { existsSync } from "node:fs";

const parts = (process.env.BENCH_SCALE_PARTS || "signon,completion").split(",").map((part) => part.trim());
for (const part of ["signon", "completion"]) {
  if (!parts.includes(part)) continue;
  const module = new URL(`./${part}.ts`, import.meta.url);
  if (!existsSync(module)) continue;
  const loaded = (await import(module.href)) as { run: () => Promise<void> };
  await loaded.run();
}
