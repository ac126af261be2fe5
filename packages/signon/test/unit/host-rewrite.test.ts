import { describe, expect, it } from "vitest";
import { hostRewrite, parseHostPattern, rewriteUri } from "../../src/deployment/host-rewrite.js";

const rewrite = (uri: string, from: string, to: string) => rewriteUri(uri, hostRewrite(from, to));

describe("parseHostPattern", () => {
  it("reads a scheme, a wildcard, a port and IPv6 addresses, in lower case", () => {
    expect(parseHostPattern("HTTPS://*.Example.ORG:8443", "--from")).toEqual({ scheme: "https", host: "example.org", wildcard: true, port: 8443, text: "HTTPS://*.Example.ORG:8443" });
    expect(parseHostPattern("[0:0::1]:3000", "--from")).toEqual({ scheme: null, host: "[::1]", wildcard: false, port: 3000, text: "[0:0::1]:3000" });
    expect(parseHostPattern("10.0.0.1", "--to")).toMatchObject({ host: "10.0.0.1", port: null });
  });
});

describe("rewriteUri", () => {
  it("changes only the scheme and host, keeping the path, query and fragment byte for byte", () => {
    expect(rewrite("https://pub.live.example/a%20b/?x=1&y=%2F#frag", "*.live.example", "*.staging.example")).toBe("https://pub.staging.example/a%20b/?x=1&y=%2F#frag");
    expect(rewrite("https://pub.live.example", "pub.live.example", "pub.staging.example")).toBe("https://pub.staging.example");
  });

  it("matches a wildcard under the domain only, keeping the labels it matched as written", () => {
    expect(rewrite("https://A.b.Live.Example/x", "*.live.example", "*.staging.example")).toBe("https://A.b.staging.example/x");
    expect(rewrite("https://live.example/x", "*.live.example", "*.staging.example")).toBeNull();
    expect(rewrite("https://notlive.example/x", "*.live.example", "*.staging.example")).toBeNull();
    expect(rewrite("https://a.live.example/x", "*.live.example", "one.example")).toBe("https://one.example/x");
  });

  it("counts a URI without a port as on its scheme's default port", () => {
    expect(rewrite("https://pub.example/x", "pub.example:443", "pub.test:8443")).toBe("https://pub.test:8443/x");
    expect(rewrite("http://pub.example/x", "pub.example:443", "pub.test")).toBeNull();
    expect(rewrite("https://pub.example:443/x", "pub.example:443", "pub.test")).toBe("https://pub.test/x");
    expect(rewrite("https://pub.example:8443/x", "pub.example", "pub.test")).toBe("https://pub.test:8443/x");
  });

  it("matches the scheme when --from names one, and sets it when --to does", () => {
    expect(rewrite("http://localhost:3000/cb", "https://localhost", "app.test")).toBeNull();
    expect(rewrite("http://localhost:3000/cb", "http://localhost", "https://app.test")).toBe("https://app.test:3000/cb");
    expect(rewrite("https://[::1]:3000/cb", "[::1]:3000", "app.test")).toBe("https://app.test/cb");
  });

  it("leaves alone what is not an absolute URI with a plain host", () => {
    expect(rewrite("https://user@pub.example/x", "pub.example", "pub.test")).toBeNull();
    expect(rewrite("/relative/path", "pub.example", "pub.test")).toBeNull();
    expect(rewrite("mailto:someone@pub.example", "pub.example", "pub.test")).toBeNull();
  });
});
