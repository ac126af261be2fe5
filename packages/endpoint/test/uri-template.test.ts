import { describe, expect, it } from "vitest";
import { compileTemplate } from "../src/uri-template/compile-template.js";

function expand(template: string, variables: Record<string, unknown>): string {
  return compileTemplate(template).expand(variables);
}

/** The variables of RFC 6570 §1.2. */
const LEVEL_EXAMPLES = {
  var: "value",
  hello: "Hello World!",
  path: "/foo/bar",
  empty: "",
  x: "1024",
  y: "768",
  list: ["red", "green", "blue"],
  keys: { semi: ";", dot: ".", comma: "," },
};

/** The variables of RFC 6570 §3.2. */
const EXPANSION_EXAMPLES = {
  count: ["one", "two", "three"],
  dom: ["example", "com"],
  dub: "me/too",
  hello: "Hello World!",
  half: "50%",
  var: "value",
  who: "fred",
  base: "http://example.com/home/",
  path: "/foo/bar",
  list: ["red", "green", "blue"],
  keys: { semi: ";", dot: ".", comma: "," },
  v: "6",
  x: "1024",
  y: "768",
  empty: "",
  empty_keys: {},
  undef: null,
};

describe("RFC 6570 §1.2 examples", () => {
  it.each([
    ["{var}", "value"],
    ["{hello}", "Hello%20World%21"],
  ])("level 1: %s expands to %s", (template, expected) => {
    expect(expand(template, LEVEL_EXAMPLES)).toBe(expected);
  });

  it.each([
    ["{+var}", "value"],
    ["{+hello}", "Hello%20World!"],
    ["{+path}/here", "/foo/bar/here"],
    ["here?ref={+path}", "here?ref=/foo/bar"],
    ["X{#var}", "X#value"],
    ["X{#hello}", "X#Hello%20World!"],
  ])("level 2: %s expands to %s", (template, expected) => {
    expect(expand(template, LEVEL_EXAMPLES)).toBe(expected);
  });

  it.each([
    ["map?{x,y}", "map?1024,768"],
    ["{x,hello,y}", "1024,Hello%20World%21,768"],
    ["{+x,hello,y}", "1024,Hello%20World!,768"],
    ["{+path,x}/here", "/foo/bar,1024/here"],
    ["{#x,hello,y}", "#1024,Hello%20World!,768"],
    ["{#path,x}/here", "#/foo/bar,1024/here"],
    ["X{.var}", "X.value"],
    ["X{.x,y}", "X.1024.768"],
    ["{/var}", "/value"],
    ["{/var,x}/here", "/value/1024/here"],
    ["{;x,y}", ";x=1024;y=768"],
    ["{;x,y,empty}", ";x=1024;y=768;empty"],
    ["{?x,y}", "?x=1024&y=768"],
    ["{?x,y,empty}", "?x=1024&y=768&empty="],
    ["?fixed=yes{&x}", "?fixed=yes&x=1024"],
    ["{&x,y,empty}", "&x=1024&y=768&empty="],
  ])("level 3: %s expands to %s", (template, expected) => {
    expect(expand(template, LEVEL_EXAMPLES)).toBe(expected);
  });

  it.each([
    ["{var:3}", "val"],
    ["{var:30}", "value"],
    ["{list}", "red,green,blue"],
    ["{list*}", "red,green,blue"],
    ["{keys}", "semi,%3B,dot,.,comma,%2C"],
    ["{keys*}", "semi=%3B,dot=.,comma=%2C"],
    ["{+path:6}/here", "/foo/b/here"],
    ["{+list}", "red,green,blue"],
    ["{+list*}", "red,green,blue"],
    ["{+keys}", "semi,;,dot,.,comma,,"],
    ["{+keys*}", "semi=;,dot=.,comma=,"],
    ["{#path:6}/here", "#/foo/b/here"],
    ["{#list}", "#red,green,blue"],
    ["{#list*}", "#red,green,blue"],
    ["{#keys}", "#semi,;,dot,.,comma,,"],
    ["{#keys*}", "#semi=;,dot=.,comma=,"],
    ["X{.var:3}", "X.val"],
    ["X{.list}", "X.red,green,blue"],
    ["X{.list*}", "X.red.green.blue"],
    ["X{.keys}", "X.semi,%3B,dot,.,comma,%2C"],
    ["X{.keys*}", "X.semi=%3B.dot=..comma=%2C"],
    ["{/var:1,var}", "/v/value"],
    ["{/list}", "/red,green,blue"],
    ["{/list*}", "/red/green/blue"],
    ["{/list*,path:4}", "/red/green/blue/%2Ffoo"],
    ["{/keys}", "/semi,%3B,dot,.,comma,%2C"],
    ["{/keys*}", "/semi=%3B/dot=./comma=%2C"],
    ["{;hello:5}", ";hello=Hello"],
    ["{;list}", ";list=red,green,blue"],
    ["{;list*}", ";list=red;list=green;list=blue"],
    ["{;keys}", ";keys=semi,%3B,dot,.,comma,%2C"],
    ["{;keys*}", ";semi=%3B;dot=.;comma=%2C"],
    ["{?var:3}", "?var=val"],
    ["{?list}", "?list=red,green,blue"],
    ["{?list*}", "?list=red&list=green&list=blue"],
    ["{?keys}", "?keys=semi,%3B,dot,.,comma,%2C"],
    ["{?keys*}", "?semi=%3B&dot=.&comma=%2C"],
    ["{&var:3}", "&var=val"],
    ["{&list}", "&list=red,green,blue"],
    ["{&list*}", "&list=red&list=green&list=blue"],
    ["{&keys}", "&keys=semi,%3B,dot,.,comma,%2C"],
    ["{&keys*}", "&semi=%3B&dot=.&comma=%2C"],
  ])("level 4: %s expands to %s", (template, expected) => {
    expect(expand(template, LEVEL_EXAMPLES)).toBe(expected);
  });
});

describe("RFC 6570 §3.2 expansion examples", () => {
  it.each([
    ["{count}", "one,two,three"],
    ["{count*}", "one,two,three"],
    ["{/count}", "/one,two,three"],
    ["{/count*}", "/one/two/three"],
    ["{;count}", ";count=one,two,three"],
    ["{;count*}", ";count=one;count=two;count=three"],
    ["{?count}", "?count=one,two,three"],
    ["{?count*}", "?count=one&count=two&count=three"],
    ["{&count*}", "&count=one&count=two&count=three"],
  ])("§3.2.1 variable expansion: %s expands to %s", (template, expected) => {
    expect(expand(template, EXPANSION_EXAMPLES)).toBe(expected);
  });

  it.each([
    ["{var}", "value"],
    ["{hello}", "Hello%20World%21"],
    ["{half}", "50%25"],
    ["O{empty}X", "OX"],
    ["O{undef}X", "OX"],
    ["{x,y}", "1024,768"],
    ["{x,hello,y}", "1024,Hello%20World%21,768"],
    ["?{x,empty}", "?1024,"],
    ["?{x,undef}", "?1024"],
    ["?{undef,y}", "?768"],
    ["{var:3}", "val"],
    ["{var:30}", "value"],
    ["{list}", "red,green,blue"],
    ["{list*}", "red,green,blue"],
    ["{keys}", "semi,%3B,dot,.,comma,%2C"],
    ["{keys*}", "semi=%3B,dot=.,comma=%2C"],
  ])("§3.2.2 simple string expansion: %s expands to %s", (template, expected) => {
    expect(expand(template, EXPANSION_EXAMPLES)).toBe(expected);
  });

  it.each([
    ["{+var}", "value"],
    ["{+hello}", "Hello%20World!"],
    ["{+half}", "50%25"],
    ["{base}index", "http%3A%2F%2Fexample.com%2Fhome%2Findex"],
    ["{+base}index", "http://example.com/home/index"],
    ["O{+empty}X", "OX"],
    ["O{+undef}X", "OX"],
    ["{+path}/here", "/foo/bar/here"],
    ["here?ref={+path}", "here?ref=/foo/bar"],
    ["up{+path}{var}/here", "up/foo/barvalue/here"],
    ["{+x,hello,y}", "1024,Hello%20World!,768"],
    ["{+path,x}/here", "/foo/bar,1024/here"],
    ["{+path:6}/here", "/foo/b/here"],
    ["{+list}", "red,green,blue"],
    ["{+list*}", "red,green,blue"],
    ["{+keys}", "semi,;,dot,.,comma,,"],
    ["{+keys*}", "semi=;,dot=.,comma=,"],
  ])("§3.2.3 reserved expansion: %s expands to %s", (template, expected) => {
    expect(expand(template, EXPANSION_EXAMPLES)).toBe(expected);
  });

  it.each([
    ["{#var}", "#value"],
    ["{#hello}", "#Hello%20World!"],
    ["{#half}", "#50%25"],
    ["foo{#empty}", "foo#"],
    ["foo{#undef}", "foo"],
    ["{#x,hello,y}", "#1024,Hello%20World!,768"],
    ["{#path,x}/here", "#/foo/bar,1024/here"],
    ["{#path:6}/here", "#/foo/b/here"],
    ["{#list}", "#red,green,blue"],
    ["{#list*}", "#red,green,blue"],
    ["{#keys}", "#semi,;,dot,.,comma,,"],
    ["{#keys*}", "#semi=;,dot=.,comma=,"],
  ])("§3.2.4 fragment expansion: %s expands to %s", (template, expected) => {
    expect(expand(template, EXPANSION_EXAMPLES)).toBe(expected);
  });

  it.each([
    ["{.who}", ".fred"],
    ["{.who,who}", ".fred.fred"],
    ["{.half,who}", ".50%25.fred"],
    ["www{.dom*}", "www.example.com"],
    ["X{.var}", "X.value"],
    ["X{.empty}", "X."],
    ["X{.undef}", "X"],
    ["X{.var:3}", "X.val"],
    ["X{.list}", "X.red,green,blue"],
    ["X{.list*}", "X.red.green.blue"],
    ["X{.keys}", "X.semi,%3B,dot,.,comma,%2C"],
    ["X{.keys*}", "X.semi=%3B.dot=..comma=%2C"],
    ["X{.empty_keys}", "X"],
    ["X{.empty_keys*}", "X"],
  ])("§3.2.5 label expansion: %s expands to %s", (template, expected) => {
    expect(expand(template, EXPANSION_EXAMPLES)).toBe(expected);
  });

  it.each([
    ["{/who}", "/fred"],
    ["{/who,who}", "/fred/fred"],
    ["{/half,who}", "/50%25/fred"],
    ["{/who,dub}", "/fred/me%2Ftoo"],
    ["{/var}", "/value"],
    ["{/var,empty}", "/value/"],
    ["{/var,undef}", "/value"],
    ["{/var,x}/here", "/value/1024/here"],
    ["{/var:1,var}", "/v/value"],
    ["{/list}", "/red,green,blue"],
    ["{/list*}", "/red/green/blue"],
    ["{/list*,path:4}", "/red/green/blue/%2Ffoo"],
    ["{/keys}", "/semi,%3B,dot,.,comma,%2C"],
    ["{/keys*}", "/semi=%3B/dot=./comma=%2C"],
  ])("§3.2.6 path segment expansion: %s expands to %s", (template, expected) => {
    expect(expand(template, EXPANSION_EXAMPLES)).toBe(expected);
  });

  it.each([
    ["{;who}", ";who=fred"],
    ["{;half}", ";half=50%25"],
    ["{;empty}", ";empty"],
    ["{;v,empty,who}", ";v=6;empty;who=fred"],
    ["{;v,bar,who}", ";v=6;who=fred"],
    ["{;x,y}", ";x=1024;y=768"],
    ["{;x,y,empty}", ";x=1024;y=768;empty"],
    ["{;x,y,undef}", ";x=1024;y=768"],
    ["{;hello:5}", ";hello=Hello"],
    ["{;list}", ";list=red,green,blue"],
    ["{;list*}", ";list=red;list=green;list=blue"],
    ["{;keys}", ";keys=semi,%3B,dot,.,comma,%2C"],
    ["{;keys*}", ";semi=%3B;dot=.;comma=%2C"],
  ])("§3.2.7 path-style parameter expansion: %s expands to %s", (template, expected) => {
    expect(expand(template, EXPANSION_EXAMPLES)).toBe(expected);
  });

  it.each([
    ["{?who}", "?who=fred"],
    ["{?half}", "?half=50%25"],
    ["{?x,y}", "?x=1024&y=768"],
    ["{?x,y,empty}", "?x=1024&y=768&empty="],
    ["{?x,y,undef}", "?x=1024&y=768"],
    ["{?var:3}", "?var=val"],
    ["{?list}", "?list=red,green,blue"],
    ["{?list*}", "?list=red&list=green&list=blue"],
    ["{?keys}", "?keys=semi,%3B,dot,.,comma,%2C"],
    ["{?keys*}", "?semi=%3B&dot=.&comma=%2C"],
  ])("§3.2.8 form-style query expansion: %s expands to %s", (template, expected) => {
    expect(expand(template, EXPANSION_EXAMPLES)).toBe(expected);
  });

  it.each([
    ["{&who}", "&who=fred"],
    ["{&half}", "&half=50%25"],
    ["?fixed=yes{&x}", "?fixed=yes&x=1024"],
    ["{&x,y,empty}", "&x=1024&y=768&empty="],
    ["{&var:3}", "&var=val"],
    ["{&list}", "&list=red,green,blue"],
    ["{&list*}", "&list=red&list=green&list=blue"],
    ["{&keys}", "&keys=semi,%3B,dot,.,comma,%2C"],
    ["{&keys*}", "&semi=%3B&dot=.&comma=%2C"],
  ])("§3.2.9 form-style query continuation: %s expands to %s", (template, expected) => {
    expect(expand(template, EXPANSION_EXAMPLES)).toBe(expected);
  });
});

describe("template edge cases", () => {
  it("treats an empty list like an undefined variable", () => {
    expect(expand("X{?list}{/list*}", { list: [] })).toBe("X");
  });

  it("skips undefined members of lists and associative arrays", () => {
    expect(expand("{?list*}{&keys*}", { list: ["a", null, "b"], keys: { a: undefined, b: 1 } })).toBe("?list=a&list=b&b=1");
  });

  it("writes numbers, booleans and big integers as text", () => {
    expect(expand("{/n,t,b}", { n: 42, t: true, b: 10n })).toBe("/42/true/10");
  });

  it("counts a prefix in characters, never splitting a surrogate pair", () => {
    expect(expand("{v:2}", { v: "😀😀😀" })).toBe("%F0%9F%98%80%F0%9F%98%80");
  });

  it("keeps percent-encoded triplets in reserved expansion and in literals", () => {
    expect(expand("/a%20b/{+v}", { v: "c%2Fd e" })).toBe("/a%20b/c%2Fd%20e");
  });

  it("encodes characters that are not allowed in a literal", () => {
    expect(expand("/a b/ü", {})).toBe("/a%20b/%C3%BC");
  });

  it("keeps braces that do not form an expression as written", () => {
    expect(expand("/a}b{}c{{x}", { x: "1" })).toBe("/a}b{}c{1");
  });

  it("encodes braces in a reserved expansion, although it keeps them in literals", () => {
    expect(expand("{+v}}", { v: "{x}" })).toBe("%7Bx%7D}");
  });

  it("expands functions and symbols as undefined", () => {
    expect(expand("X{f}{?s}", { f: () => "no", s: Symbol("no") })).toBe("X");
  });

  it("writes no value for a variable that is never filled", () => {
    expect(compileTemplate("/{a}{/b}", new Set(["b"])).expand({ a: "x", b: "y" })).toBe("/x");
  });

  it("lists each variable name once, in order, without modifiers", () => {
    expect(compileTemplate("/{a}{?b:3,c*}{&a}").variableNames).toEqual(["a", "b", "c"]);
  });
});
