import { describe, expect, it } from "vitest";
import { showsSecondFactor } from "../../src/accounts/sessions.js";

describe("showsSecondFactor (the methods a sign-in reported, RFC 8176)", () => {
  const table: [string[], boolean][] = [
    [["pwd"], false],
    [[], false],
    [["mfa"], true],
    [["pwd", "mfa"], true],
    [["mca"], true],
    [["hwk"], true],
    [["pwd", "otp"], true],
    [["pwd", "hwk"], true],
    [["pwd", "sms"], true],
    [["pwd", "fpt"], true],
    [["swk", "face"], true],
    [["otp"], false],
    [["sms"], false],
    [["swk"], false],
    [["pwd", "kba"], false],
    [["pwd", "rba"], false],
    [["pwd", "geo"], false],
    [["pwd", "user"], false],
    [["pwd", "pwd"], false],
  ];
  it.each(table)("%j → %s", (methods, expected) => {
    expect(showsSecondFactor(methods)).toBe(expected);
  });
});
