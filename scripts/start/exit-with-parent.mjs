import { Worker } from "node:worker_threads";

// Loaded (node --import) into every process npm start runs: when npm start is gone (killed with SIGKILL,
// its terminal closed), the process stops by itself instead of holding its port and the database.
// The parent's end closes the IPC channel npm start opened; a change of parent process is the second sign.
const parent = process.ppid;
let gone = false;

function parentGone() {
  if (gone) return;
  gone = true;
  // Nobody reads the output any more: a failed write must not end the process before it has closed cleanly.
  for (const stream of [process.stdout, process.stderr]) stream.on("error", () => undefined);
  // The process's own SIGTERM handling closes it in order (requests finish, the database closes last);
  // a process without one ends at once. Should closing hang, the timer ends it.
  setTimeout(() => process.exit(1), 15_000).unref();
  process.kill(process.pid, "SIGTERM");
}

// On exit, pino writes out the log lines it still holds, and retries a write to a closed pipe for ever. With
// npm start gone nobody reads them: the process ends at once without them. While npm start is there, a
// watchdog thread ends the process if npm start goes during that last flush, which blocks this thread.
process.prependListener("exit", (code) => {
  if (gone || process.ppid !== parent) process.reallyExit(code);
  try {
    const watchdog = new Worker(
      `const { ppid } = process;
      setInterval(() => { if (process.ppid !== ppid) process.kill(${process.pid}, "SIGKILL"); }, 100);
      setTimeout(() => process.kill(${process.pid}, "SIGKILL"), 15000);`,
      { eval: true },
    );
    watchdog.unref();
  } catch {
    // No thread to spare: the exit goes on as it would have.
  }
});

if (process.channel) {
  // The channel must not keep a command that has finished from exiting.
  process.channel.unref();
  process.once("disconnect", parentGone);
}
setInterval(() => {
  if (process.ppid !== parent) parentGone();
}, 1000).unref();
