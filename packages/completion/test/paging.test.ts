import { describe, expect, it } from "vitest";
import { pageEnvelope, pageUrl, pageWindow, parsePageRequest } from "../src/http/paging.js";

describe("parsePageRequest", () => {
  it("defaults to page 1 of 10", () => {
    expect(parsePageRequest(undefined, undefined)).toEqual({ page: 1, pageSize: 10 });
  });

  it("clamps page_size to 1000", () => {
    expect(parsePageRequest("2", "5000")).toEqual({ page: 2, pageSize: 1000 });
  });

  it.each([["0"], ["-1"], ["1.5"], ["abc"], [""], ["1e3"], ["99999999999999999999"]])("names page %j as invalid", (page) => {
    expect(parsePageRequest(page, undefined)).toBe("page");
  });

  it.each([["0"], ["-5"], ["ten"], ["2.0"]])("names page_size %j as invalid", (size) => {
    expect(parsePageRequest("1", size)).toBe("page_size");
  });
});

describe("pageWindow", () => {
  it("covers an empty result with page 1", () => {
    expect(pageWindow({ page: 1, pageSize: 10 }, 0)).toEqual({
      count: 0,
      numPages: 1,
      currentPage: 1,
      start: 0,
      limit: 10,
      hasNext: false,
      hasPrevious: false,
    });
  });

  it("refuses page 2 of an empty result and a page past the last", () => {
    expect(pageWindow({ page: 2, pageSize: 10 }, 0)).toBeNull();
    expect(pageWindow({ page: 4, pageSize: 10 }, 30)).toBeNull();
  });

  it("puts the last page at an exact multiple of the page size", () => {
    expect(pageWindow({ page: 3, pageSize: 10 }, 30)).toEqual({
      count: 30,
      numPages: 3,
      currentPage: 3,
      start: 20,
      limit: 10,
      hasNext: false,
      hasPrevious: true,
    });
  });
});

describe("page links", () => {
  it("changes only page, keeping other parameters as written", () => {
    expect(pageUrl("http://h/api/?user_ids=1,2&page=2&requested_fields=chapter", 3)).toBe(
      "http://h/api/?user_ids=1,2&page=3&requested_fields=chapter",
    );
    expect(pageUrl("http://h/api/?page_size=1", 2)).toBe("http://h/api/?page_size=1&page=2");
    expect(pageUrl("http://h/api/", 2)).toBe("http://h/api/?page=2");
  });

  it("links to neighbours and leaves the ends null", () => {
    const window = pageWindow({ page: 2, pageSize: 1 }, 3)!;
    expect(pageEnvelope(window, "http://h/x/?page=2&page_size=1", ["b"])).toEqual({
      count: 3,
      num_pages: 3,
      current_page: 2,
      start: 1,
      next: "http://h/x/?page=3&page_size=1",
      previous: "http://h/x/?page=1&page_size=1",
      results: ["b"],
    });
  });
});
