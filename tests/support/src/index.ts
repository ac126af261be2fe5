export { freePort } from "@tessera/db/testing";
export { repositoryRoot, runShipped, signonCli, signonCliAt, spawnShipped, startShipped, waitUntilReady, type ShippedCommand, type ShippedRoot, type ShippedService, type ServiceProcess } from "./shipped.js";
export { answers, childrenOf, isRunning, runStart, startCommand, startOptions, startScript, whenEnded, type StartRun } from "./npm-start.js";
export { CookieJar, importSmallCourse, startSink } from "./load-support.js";
