export { freePort } from "@tessera/db/testing";
export { repositoryRoot, runShipped, signonCli, spawnShipped, startShipped, waitUntilReady, type ShippedCommand, type ShippedService, type ServiceProcess } from "./shipped.js";
