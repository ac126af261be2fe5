// Decides which client connection may talk to PGlite's single session next.
//
// PGlite runs one PostgreSQL backend, so every connection of the socket server
// shares one session. pglite-socket's own queue interleaves connections message
// by message, which breaks the extended query protocol (another client's Parse
// can land between this client's Parse and Sync) and can wedge its queue after
// an error. This arbiter hands the session to one connection for a whole unit
// of work: an extended-protocol exchange up to its Sync, a simple Query, and
// everything in between BEGIN and COMMIT/ROLLBACK. Other connections wait.
//
// It implements the queue interface that PGLiteSocketHandler calls:
// enqueue(), clearQueueForHandler(), clearTransactionIfNeeded().

import { TextEncoder } from "node:util";

const SYNC = new Uint8Array([0x53, 0, 0, 0, 4]);
const ROLLBACK = simpleQuery("ROLLBACK");

/** Message types that keep the session until Sync: the extended query protocol, and COPY data. */
const EXTENDED = new Set(["P", "B", "D", "E", "C", "H", "d"]);

/**
 * @param {string} sql
 * @returns {Uint8Array}
 */
function simpleQuery(sql) {
  const text = new TextEncoder().encode(sql);
  const message = new Uint8Array(1 + 4 + text.length + 1);
  const view = new DataView(message.buffer);
  message[0] = 0x51;
  view.setInt32(1, 4 + text.length + 1);
  message.set(text, 5);
  return message;
}

/**
 * The frontend message type of a raw protocol message, or "startup" for the
 * untyped messages that open a connection.
 * @param {Uint8Array} message
 * @returns {string}
 */
export function messageType(message) {
  const first = message[0];
  if (first === undefined || first === 0) return "startup";
  return String.fromCharCode(first);
}

/**
 * Whether the connection that sent a message of this type keeps the session.
 * @param {string} type
 * @param {boolean} inTransaction
 * @returns {boolean}
 */
export function keepsSession(type, inTransaction) {
  if (EXTENDED.has(type)) return true;
  if (type === "X") return false;
  return inTransaction;
}

export class SessionArbiter {
  /** @type {import("@electric-sql/pglite").PGlite} */
  #db;
  /** @type {Array<{ handlerId: number, message: Uint8Array | null, onData: (data: Uint8Array) => void, resolve: (bytes: number) => void, reject: (error: Error) => void }>} */
  #queue = [];
  /** @type {number | null} */
  #owner = null;
  #running = false;
  /** Connections that have gone away; one that ends up owning the session gives it back at once. */
  /** @type {Set<number>} */
  #gone = new Set();
  /** @type {number | null} */
  #runningFor = null;
  /** @type {Array<() => void>} */
  #idleWaiters = [];
  #stallWarningMs;
  /** @type {(message: string) => void} */
  #onStall;
  /** @type {ReturnType<typeof setTimeout> | undefined} */
  #stallTimer;

  /**
   * @param {import("@electric-sql/pglite").PGlite} db
   * @param {{ stallWarningMs?: number | undefined, onStall?: (message: string) => void }} [options]
   *   `onStall` is told when one connection has kept the session for
   *   `stallWarningMs` (default 10 s) without sending anything while others wait.
   */
  constructor(db, options = {}) {
    this.#db = db;
    this.#stallWarningMs = options.stallWarningMs ?? 10_000;
    this.#onStall = options.onStall ?? (() => {});
  }

  /**
   * Queues one protocol message of a connection; resolves with the number of
   * bytes PGlite answered once it has run.
   * @param {number} handlerId
   * @param {Uint8Array} message
   * @param {(data: Uint8Array) => void} onData
   * @returns {Promise<number>}
   */
  enqueue(handlerId, message, onData) {
    return new Promise((resolve, reject) => {
      this.#queue.push({ handlerId, message, onData, resolve, reject });
      void this.#drain();
    });
  }

  /** @returns {number} */
  getQueueLength() {
    return this.#queue.length;
  }

  /**
   * Drops the messages a disconnected connection still had queued.
   * @param {number} handlerId
   */
  clearQueueForHandler(handlerId) {
    this.#gone.add(handlerId);
    const kept = [];
    for (const item of this.#queue) {
      if (item.handlerId === handlerId) item.reject(new Error("connection closed"));
      else kept.push(item);
    }
    this.#queue = kept;
  }

  /**
   * Gives the session back when its owner disconnected in the middle of a unit
   * of work without a Terminate message: ends a pending extended-protocol exchange and rolls back an open
   * transaction, as PostgreSQL does when a backend's client goes away.
   * @param {number} handlerId
   * @returns {Promise<void>}
   */
  async clearTransactionIfNeeded(handlerId) {
    if (this.#owner !== handlerId) {
      // A message of this connection still running is dealt with when it ends.
      if (this.#runningFor !== handlerId) this.#gone.delete(handlerId);
      return;
    }
    await new Promise((resolve, reject) => {
      this.#queue.unshift({ handlerId, message: null, onData: () => {}, resolve, reject });
      void this.#drain();
    });
  }

  /**
   * Resolves once nothing runs and nothing waits that could run.
   * @returns {Promise<void>}
   */
  idle() {
    if (!this.#running) return Promise.resolve();
    return new Promise((resolve) => this.#idleWaiters.push(resolve));
  }

  #next() {
    const index = this.#owner === null ? 0 : this.#queue.findIndex((item) => item.handlerId === this.#owner);
    if (index < 0 || index >= this.#queue.length) return undefined;
    return this.#queue.splice(index, 1)[0];
  }

  async #drain() {
    if (this.#running) return;
    this.#running = true;
    try {
      for (let item = this.#next(); item !== undefined; item = this.#next()) {
        // A Terminate is not passed on: PGlite's one session outlives every
        // connection, so the connection's unfinished work is undone instead.
        if (item.message === null || messageType(item.message) === "X") await this.#release(item);
        else await this.#run(item);
      }
    } finally {
      this.#running = false;
      this.#watchForStall();
      for (const resolve of this.#idleWaiters.splice(0)) resolve();
    }
  }

  // A connection holding the session while idle (an open transaction whose
  // code awaits something else) blocks every other connection. The usual
  // cause is a query on another connection awaited inside a transaction,
  // which never finishes here: say so instead of hanging silently.
  #watchForStall() {
    clearTimeout(this.#stallTimer);
    this.#stallTimer = undefined;
    const owner = this.#owner;
    if (owner === null || this.#queue.length === 0) return;
    this.#stallTimer = setTimeout(() => {
      if (this.#owner !== owner || this.#queue.length === 0 || this.#running) return;
      const waiting = new Set(this.#queue.map((item) => item.handlerId)).size;
      this.#onStall(
        `connection ${owner} has held the embedded database's only session for ${this.#stallWarningMs} ms ` +
          `(open transaction or unfinished query) while ${waiting} other connection(s) wait; ` +
          `a query on another connection awaited inside a transaction never completes on the embedded database`,
      );
    }, this.#stallWarningMs);
    this.#stallTimer.unref();
  }

  /** @param {{ handlerId: number, message: Uint8Array | null, onData: (data: Uint8Array) => void, resolve: (bytes: number) => void, reject: (error: Error) => void }} item */
  async #run(item) {
    const message = /** @type {Uint8Array} */ (item.message);
    let bytes = 0;
    this.#runningFor = item.handlerId;
    try {
      await this.#db.runExclusive(() =>
        this.#db.execProtocolRawStream(message, {
          onRawData: (data) => {
            bytes += data.length;
            item.onData(data);
          },
        }),
      );
      item.resolve(bytes);
    } catch (error) {
      item.reject(error instanceof Error ? error : new Error(String(error)));
    } finally {
      this.#runningFor = null;
      this.#owner = keepsSession(messageType(message), this.#db.isInTransaction()) ? item.handlerId : null;
      if (this.#gone.has(item.handlerId)) {
        if (this.#owner === item.handlerId) {
          this.#queue.unshift({ handlerId: item.handlerId, message: null, onData: () => {}, resolve: () => {}, reject: () => {} });
        } else {
          this.#gone.delete(item.handlerId);
        }
      }
    }
  }

  /** @param {{ handlerId: number, resolve: (bytes: number) => void, reject: (error: Error) => void }} item */
  async #release(item) {
    try {
      await this.#db.runExclusive(async () => {
        await this.#db.execProtocolRawStream(SYNC, { onRawData: () => {} });
        if (this.#db.isInTransaction()) {
          await this.#db.execProtocolRawStream(ROLLBACK, { onRawData: () => {} });
        }
      });
      item.resolve(0);
    } catch (error) {
      item.reject(error instanceof Error ? error : new Error(String(error)));
    } finally {
      this.#gone.delete(item.handlerId);
      this.#owner = null;
    }
  }
}
