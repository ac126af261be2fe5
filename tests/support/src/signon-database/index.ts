// A GOV.UK Signon database for the tests and the benchmark of `signon import from-signon`
// (`@tessera/test-support/signon-database`): a MariaDB server of the test's own, Signon's tables, and a small
// database of rows made as Signon makes them.
export { mariadbUnavailable, startMariadb, type MariadbServer } from "./mariadb-server.js";
export { activeRecordKeys, aliceEarlierPasswords, pepper, signonSchemaSql, writeSignonFixture, type SignonFixture, type SignonPerson } from "./fixture.js";
