// The kit for drills under load (`@tessera/test-support/drill`): what the failover, fault, backup and upgrade
// drills and the benchmarks on the cluster share. See README.md for what each file holds.

// The documented deployment's PostgreSQL cluster: Patroni, etcd, HAProxy and the pgBackRest repository.
export { binaries, failoverPackages, postgresUser } from "./binaries.js";
export { failoverClusterUnavailable, patroniTimings, startFailoverCluster, type ClusterNode, type FailoverCluster, type Listener, type NodeRole, type RestoreTarget } from "./cluster.js";
export type { BackupRepository } from "./backup-repository.js";
export { freePorts } from "./ports.js";
export { ProbeWriter, type ProbeAck } from "./probe.js";
export { ReadLoop, WriteLoop, type Acknowledged, type Failed } from "./traffic.js";

// Processes and waiting.
export { commandLineOf, descendantsOf, killTree, logTail, signalAll, startLogged, type LoggedProcess, type RunAs } from "./processes.js";
export { failure, pause, waitFor } from "./wait.js";

// The services as shipped, under load, and the checks afterwards.
export { startFailoverSystem, type FailoverSystem } from "./services.js";
export { inDatabase } from "./database-url.js";
export { makeDeploymentCertificates, runMakeCertificates, verifiedTls, type DeploymentCertificates, type TlsIdentity } from "./certificates.js";
export { tlsRequest } from "./tls-request.js";
export { clearClient, postgresClient, tlsClient, type ListenerAnswer } from "./tls-clients.js";
export { openServiceWorkspace, type ServiceWorkspace } from "./service-workspace.js";
export { applicationId, COURSE_KEY, createLoadAccounts, importLoadCourse, LEARNERS, PASSWORD, PROBLEMS, type LoadAccounts, type SignonCommand } from "./first-time-set-up.js";
export { completionEnv, editorialEnv } from "./service-env.js";
export { COMPLETION_READ_KINDS, newLoadRecord, rewindToRestorePoint, signIn, signInSessions, startLoad, WRITE_KINDS, type Chain, type LoadOptions, type LoadRecord, type Rotation, type RunningLoad, type Sessions } from "./load.js";
export { allowedOutcomes, asOfRestorePoint, type Attempt, type RestorePointTimes } from "./acknowledged-writes.js";
export { codeProblems, completionProblems, pushProblems, refreshProblems, restorePointTokenProblems, tokenProblems, type RestoredTokens } from "./checks.js";
export { csrfTokenOf, HttpClient, type Answer, type RequestRecorder } from "./http-client.js";
export { RequestLog, type Outcome } from "./request-log.js";
export { CountingReceiver, type Receipt } from "./counting-receiver.js";
export { ErrorLines } from "./error-lines.js";
export { acknowledgedWrites, Drill, firstProblems, isAcknowledgedWrite, type Round, type RoundOptions } from "./drill.js";
