import { describe, expect, it } from "vitest";
import { MalformedFormError, parseFormBody } from "../../src/http/form-body.js";

describe("parseFormBody", () => {
  it("decodes names and values, with + as a space", () => {
    expect(parseFormBody(Buffer.from("grant_type=authorization_code&redirect_uri=https%3A%2F%2Fa.example%2Fcb&x=a+b&empty=&flag"))).toEqual({
      grant_type: "authorization_code",
      redirect_uri: "https://a.example/cb",
      x: "a b",
      empty: "",
      flag: "",
    });
  });

  it("keeps a repeated name as an array", () => {
    expect(parseFormBody("code=a&code=b&code=c")).toEqual({ code: ["a", "b", "c"] });
  });

  it("decodes UTF-8", () => {
    expect(parseFormBody("name=J%C3%BCrgen")).toEqual({ name: "Jürgen" });
  });

  it.each([
    ["raw invalid UTF-8", Buffer.from([0x61, 0x3d, 0xff, 0xfe])],
    ["percent-encoded invalid UTF-8", Buffer.from("a=%FF")],
    ["a broken escape", Buffer.from("a=%G1")],
    ["a truncated escape", Buffer.from("a=%")],
    ["a NUL character", Buffer.from("a=x%00y")],
  ])("refuses %s", (_name, body) => {
    expect(() => parseFormBody(body)).toThrow(MalformedFormError);
  });

  it("has no prototype to pollute", () => {
    const fields = parseFormBody("__proto__=x&constructor=y");
    expect(Object.getPrototypeOf(fields)).toBe(null);
    expect(fields["__proto__"]).toBe("x");
  });
});
