import { setImmediate as nextTurn } from "node:timers/promises";
import { Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import { csvBatchSize, usersCsvStream } from "../../src/accounts/users-csv.js";
import type { UserListRow, UserStatus } from "../../src/repositories/user-search.js";

type ExportRow = UserListRow & { status: readonly UserStatus[]; permissions: readonly string[] };

function person(batch: number, index: number): ExportRow {
  return {
    uid: `uid-${batch}-${index}`,
    sortName: `person ${batch} ${index}`,
    name: `Person ${batch} ${index}`,
    email: `person-${batch}-${index}@example.org`,
    role: "normal",
    organisationName: null,
    suspendedAt: null,
    lockedAt: null,
    hasPassword: true,
    lastSignedInAt: null,
    createdAt: new Date("2026-01-01T00:00:00Z"),
    status: ["active"],
    permissions: [],
  };
}

/** `count` batches of `csvBatchSize` people, counting how many have been asked for. */
function batches(count: number) {
  const source = { pulled: 0 };
  async function* rows() {
    for (let batch = 0; batch < count; batch++) {
      source.pulled++;
      yield Array.from({ length: csvBatchSize }, (_, index) => person(batch, index));
    }
  }
  return { source, rows: rows() };
}

/** A response whose client reads nothing until `release()`: each write waits for it. */
function stalledResponse() {
  let released = false;
  const waiting: (() => void)[] = [];
  let text = "";
  const sink = new Writable({
    highWaterMark: 16 * 1024,
    decodeStrings: false,
    write(chunk: string | Buffer, _encoding, done) {
      text += chunk.toString();
      if (released) done();
      else waiting.push(done);
    },
  });
  return {
    sink,
    text: () => text,
    writes: () => waiting.length,
    release() {
      released = true;
      for (const done of waiting.splice(0)) done();
    },
  };
}

async function settle(): Promise<void> {
  for (let turn = 0; turn < 50; turn++) await nextTurn();
}

describe("usersCsvStream", () => {
  it("reads the next batch of people only when the response has taken the lines before", async () => {
    const total = 40;
    const { source, rows } = batches(total);
    const response = stalledResponse();
    usersCsvStream(rows).pipe(response.sink);
    await settle();
    // The client reads nothing: one write is waiting, the stream holds a batch more, the rest stay in the database.
    expect(response.writes()).toBe(1);
    expect(source.pulled).toBeLessThanOrEqual(5);

    const finished = new Promise((resolve) => response.sink.on("finish", resolve));
    response.release();
    await finished;
    expect(source.pulled).toBe(total);
    const lines = response.text().split("\n");
    expect(lines[0]).toBe("name,email,role,organisation,status,last_sign_in,created_at");
    expect(lines).toHaveLength(total * csvBatchSize + 2);
    expect(lines.at(-2)).toBe(`Person ${total - 1} ${csvBatchSize - 1},person-${total - 1}-${csvBatchSize - 1}@example.org,normal,,active,,2026-01-01T00:00:00.000Z`);
  });

  it("keeps what waits for a stalled client the same, however many batches there are", async () => {
    const waiting: number[] = [];
    for (const total of [10, 200]) {
      const { source, rows } = batches(total);
      const response = stalledResponse();
      const stream = usersCsvStream(rows);
      stream.pipe(response.sink);
      await settle();
      expect(source.pulled, `${total} batches`).toBeLessThanOrEqual(5);
      waiting.push(source.pulled);
      // The bytes read but not yet taken by the client: the stream's buffer and the one write under way (a line here is under 100 bytes).
      expect(stream.readableLength + response.sink.writableLength, `${total} batches`).toBeLessThan(3 * csvBatchSize * 100);
      stream.destroy();
    }
    expect(waiting[1]).toBe(waiting[0]);
  });
});
