import { describe, expect, it } from "vitest";
import { TOKEN_ANSWER_MAX_AGE_MS, TokenAnswerCache } from "../../src/oauth/token-answer-cache.js";
import { liveAccessToken } from "../support/live-access-token.js";

const now = new Date("2026-11-27T12:00:00Z");

function answer(expiresAt?: Date) {
  return liveAccessToken(now, expiresAt);
}

function followingCache(capacity = 10, clock = () => 0): TokenAnswerCache {
  const cache = new TokenAnswerCache(capacity, clock);
  cache.following = true;
  return cache;
}

describe("TokenAnswerCache", () => {
  it("keeps an answer read between two changes, and finds it", () => {
    const cache = followingCache();
    const kept = answer();
    cache.keep("a", kept, cache.generation);
    expect(cache.find("a", now)).toBe(kept);
    expect(cache.find("b", now)).toBeUndefined();
  });

  it("does not keep an answer whose read overlapped a change", () => {
    const cache = followingCache();
    const since = cache.generation;
    cache.forgetAll();
    cache.keep("a", answer(), since);
    expect(cache.find("a", now)).toBeUndefined();
  });

  it("keeps nothing while changes are not followed, and forgets everything when following starts or stops", () => {
    const cache = new TokenAnswerCache(10, () => 0);
    cache.keep("a", answer(), cache.generation);
    expect(cache.size).toBe(0);
    cache.following = true;
    cache.keep("a", answer(), cache.generation);
    expect(cache.size).toBe(1);
    const since = cache.generation;
    cache.following = false;
    cache.following = true;
    expect(cache.size).toBe(0);
    cache.keep("a", answer(), since);
    expect(cache.size).toBe(0);
  });

  it("forgets every answer on a change", () => {
    const cache = followingCache();
    cache.keep("a", answer(), cache.generation);
    cache.keep("b", answer(), cache.generation);
    cache.forgetAll();
    expect(cache.find("a", now)).toBeUndefined();
    expect(cache.size).toBe(0);
  });

  it("does not answer for a token that has expired", () => {
    const cache = followingCache();
    cache.keep("a", answer(new Date(now.getTime() + 1000)), cache.generation);
    expect(cache.find("a", new Date(now.getTime() + 999))).toBeDefined();
    expect(cache.find("a", new Date(now.getTime() + 1000))).toBeUndefined();
  });

  it("drops an answer kept longer than its maximum age", () => {
    let clock = 0;
    const cache = followingCache(10, () => clock);
    cache.keep("a", answer(), cache.generation);
    clock = TOKEN_ANSWER_MAX_AGE_MS;
    expect(cache.find("a", now)).toBeDefined();
    clock += 1;
    expect(cache.find("a", now)).toBeUndefined();
  });

  it("keeps at most its capacity, the oldest going first", () => {
    const cache = followingCache(2);
    for (const key of ["a", "b", "c"]) cache.keep(key, answer(), cache.generation);
    expect(cache.size).toBe(2);
    expect(cache.find("a", now)).toBeUndefined();
    expect(cache.find("c", now)).toBeDefined();
  });

  it("keeps nothing with a capacity of 0", () => {
    const cache = followingCache(0);
    cache.keep("a", answer(), cache.generation);
    expect(cache.size).toBe(0);
  });
});
