export { freePort } from "@tessera/db/testing";
export { repositoryRoot, runShipped, signonCli, spawnShipped, startShipped, waitUntilReady, type ShippedCommand, type ShippedService, type ServiceProcess } from "./shipped.js";
export { answers, childrenOf, isRunning, runStart, startCommand, startOptions, startScript, whenEnded, type StartRun } from "./npm-start.js";
export { CookieJar, importSmallCourse } from "./load-support.js";
