// `npm run bench -- scale`: the reads that grow with the data, at 1k, 100k and 1M rows, each benchmark in turn.
import { existsSync } from "node:fs";

for (const name of ["signon", "completion"]) {
  const file = new URL(`./${name}.ts`, import.meta.url);
  if (!existsSync(file)) continue;
  console.log(`\n== scale: ${name}`);
  const module = (await import(file.href)) as { run(): Promise<void> };
  await module.run();
}
