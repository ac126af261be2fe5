import { describe, expect, it } from "vitest";
import { readClientCredentials } from "../../src/oauth/client-credentials.js";
import { writeOAuthError } from "../../src/oauth/error-response.js";

const basic = (raw: string) => `Basic ${Buffer.from(raw, "utf8").toString("base64")}`;

function failure(authorization: string | undefined, body: Record<string, string> = {}) {
  try {
    readClientCredentials({ authorization, body });
  } catch (error) {
    const { status, body: wire, headers } = writeOAuthError(error);
    return { status, error: wire.error, challenge: headers["www-authenticate"] ?? null };
  }
  throw new Error("expected a failure");
}

describe("readClientCredentials", () => {
  it("reads client_id and client_secret from the form body", () => {
    expect(readClientCredentials({ authorization: undefined, body: { client_id: "abc", client_secret: "s3cret" } })).toEqual({
      clientId: "abc",
      clientSecret: "s3cret",
      method: "client_secret_post",
    });
  });

  it("reads HTTP Basic credentials and form-decodes each part", () => {
    expect(readClientCredentials({ authorization: basic("my%3Aclient:p%40ss+word%2B"), body: {} })).toEqual({
      clientId: "my:client",
      clientSecret: "p@ss word+",
      method: "client_secret_basic",
    });
  });

  it("accepts the scheme name in any case and a matching client_id in the body", () => {
    const header = basic("abc:def").replace("Basic", "bAsIc");
    expect(readClientCredentials({ authorization: header, body: { client_id: "abc" } }).clientId).toBe("abc");
  });

  it("keeps colons inside the secret", () => {
    expect(readClientCredentials({ authorization: basic("abc:de:f"), body: {} }).clientSecret).toBe("de:f");
  });

  it.each([
    ["no credentials at all", undefined, {}, { status: 401, error: "invalid_client", challenge: null }],
    ["a client_id without a secret", undefined, { client_id: "abc" }, { status: 401, error: "invalid_client", challenge: null }],
    ["an empty secret", undefined, { client_id: "abc", client_secret: "" }, { status: 401, error: "invalid_client", challenge: null }],
    ["a Bearer header", "Bearer abc", {}, { status: 401, error: "invalid_client", challenge: null }],
    ["Basic without credentials", "Basic", {}, { status: 401, error: "invalid_client", challenge: expect.stringMatching(/^Basic/) }],
    ["Basic that is not base64", "Basic !!!!", {}, { status: 401, error: "invalid_client", challenge: expect.stringMatching(/^Basic/) }],
    ["Basic with bad padding", "Basic YWJj", {}, { status: 401, error: "invalid_client", challenge: expect.stringMatching(/^Basic/) }],
    ["Basic without a colon", basic("abcdef"), {}, { status: 401, error: "invalid_client", challenge: expect.stringMatching(/^Basic/) }],
    ["Basic with an empty id", basic(":secret"), {}, { status: 401, error: "invalid_client", challenge: expect.stringMatching(/^Basic/) }],
    ["Basic with a NUL in the id", basic("a%00c:secret"), {}, { status: 401, error: "invalid_client", challenge: expect.stringMatching(/^Basic/) }],
    ["Basic with a broken escape", basic("abc:%zz"), {}, { status: 401, error: "invalid_client", challenge: expect.stringMatching(/^Basic/) }],
    ["Basic with invalid UTF-8", `Basic ${Buffer.from([0x61, 0x3a, 0xff]).toString("base64")}`, {}, { status: 401, error: "invalid_client", challenge: expect.stringMatching(/^Basic/) }],
    ["Basic and a body secret", basic("abc:def"), { client_secret: "def" }, { status: 400, error: "invalid_request", challenge: null }],
    ["Basic and a different body client_id", basic("abc:def"), { client_id: "xyz" }, { status: 400, error: "invalid_request", challenge: null }],
  ])("refuses %s", (_name, authorization, body, expected) => {
    expect(failure(authorization, body)).toEqual(expected);
  });
});
