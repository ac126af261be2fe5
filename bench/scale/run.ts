// Size against speed: the reads that grow with the data, at 1k, 100k and 1M people (Sign-on) and learners
// (Completion), each on a database generated through SQL.
//
//   DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres npm run bench -- scale
//
// Each part lives in a module of its own that exports `run()`: ./signon.ts, and ./completion.ts when present.
import { existsSync } from "node:fs";
import { run as runSignon } from "./signon.js";

await runSignon();
const completion = new URL("./completion.ts", import.meta.url);
if (existsSync(completion)) {
  const part = (await import(completion.href)) as { run: () => Promise<void> };
  await part.run();
}
