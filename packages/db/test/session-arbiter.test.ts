import { describe, expect, it } from "vitest";
import { keepsSession, messageType } from "../src/embedded/session-arbiter.mjs";

const bytes = (...values: number[]): Uint8Array => new Uint8Array(values);

describe("messageType", () => {
  it("reads the type byte of a typed message", () => {
    expect(messageType(bytes(0x51, 0, 0, 0, 5, 0))).toBe("Q");
    expect(messageType(bytes(0x53, 0, 0, 0, 4))).toBe("S");
  });

  it("calls an untyped message (startup, SSL request) a startup message", () => {
    expect(messageType(bytes(0, 0, 0, 8, 0x04, 0xd2, 0x16, 0x2f))).toBe("startup");
  });
});

describe("keepsSession", () => {
  it("keeps the session through an extended-protocol exchange until its Sync", () => {
    for (const type of ["P", "B", "D", "E", "C", "H"]) expect(keepsSession(type, false)).toBe(true);
    expect(keepsSession("S", false)).toBe(false);
  });

  it("keeps the session while a transaction is open, whatever the message", () => {
    expect(keepsSession("Q", true)).toBe(true);
    expect(keepsSession("S", true)).toBe(true);
    expect(keepsSession("Q", false)).toBe(false);
  });

  it("gives the session up on Terminate", () => {
    expect(keepsSession("X", true)).toBe(false);
  });
});
