// `npm start`: runs Sign-on (:3000) and then Completion (:3001) on one machine.
// Without DATABASE_URL both share the embedded database in ./data/pglite, served by the
// Sign-on process. Ctrl-C (SIGINT) or SIGTERM stops Completion first, then Sign-on, so the
// embedded database closes last and cleanly.
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const services = [
  { name: "signon", entry: "packages/signon/src/server.ts", port: 3000, ready: "/.well-known/oauth-authorization-server" },
  { name: "completion", entry: "packages/completion/src/server.ts", port: 3001, ready: "/api/completion/v1/openapi.json" },
];
const running = [];
let stopping = false;

function prefixLines(name, stream, target) {
  let rest = "";
  stream.setEncoding("utf8");
  stream.on("data", (chunk) => {
    const lines = (rest + chunk).split("\n");
    rest = lines.pop() ?? "";
    for (const line of lines) target.write(`${name.padEnd(10)} | ${line}\n`);
  });
}

function launch(service) {
  const child = spawn(process.execPath, ["--import", "tsx", service.entry], {
    cwd: root,
    env: { ...process.env, PORT: String(service.port) },
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  prefixLines(service.name, child.stdout, process.stdout);
  prefixLines(service.name, child.stderr, process.stderr);
  const exited = new Promise((resolve) => child.once("exit", (code, signal) => resolve({ code, signal })));
  const entry = { service, child, exited };
  running.push(entry);
  exited.then(({ code, signal }) => {
    if (!stopping) {
      console.error(`${service.name} stopped unexpectedly (${signal ?? `exit code ${code}`}); stopping the others`);
      void stopAll(1);
    }
  });
  return entry;
}

async function waitUntilReady(entry, timeoutMs = 60_000) {
  const { service } = entry;
  const deadline = Date.now() + timeoutMs;
  let exited = false;
  void entry.exited.then(() => (exited = true));
  while (Date.now() < deadline && !exited) {
    try {
      const response = await fetch(`http://127.0.0.1:${service.port}${service.ready}`);
      if (response.ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`${service.name} did not become ready on port ${service.port}`);
}

async function stopAll(exitCode) {
  if (stopping) return;
  stopping = true;
  for (const { child, exited } of [...running].reverse()) {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
    await exited;
  }
  process.exit(exitCode);
}

for (const signal of ["SIGINT", "SIGTERM"]) process.on(signal, () => void stopAll(0));
process.on("exit", () => {
  for (const { child } of running) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
});

try {
  for (const service of services) {
    const entry = launch(service);
    await waitUntilReady(entry);
    if (stopping) break;
  }
  if (!stopping) {
    console.log(
      "\nTessera is running:\n" +
        "  Sign-on     http://127.0.0.1:3000\n" +
        "  Completion  http://127.0.0.1:3001/api/completion/v1/\n" +
        "Press Ctrl-C to stop.\n",
    );
  }
} catch (error) {
  console.error(error instanceof Error ? error.message : error);
  await stopAll(1);
}
