import { describe, expect, it } from "vitest";
import { exactCountLimit, shownCount, usersPerPage } from "../../src/accounts/user-search.js";

const key = { text: "ada", uid: "00000000-0000-4000-8000-000000000001" };
const rows = (count: number) => Array.from({ length: count }, () => ({}));
const counted = (count: number, flags: Partial<{ exact: boolean; moreThan: boolean; tooSlowToCount: boolean }> = {}) => ({
  count,
  exact: false,
  moreThan: false,
  tooSlowToCount: false,
  ...flags,
});

describe("the count the users list shows", () => {
  it("is the rows of a first page with room to spare, whatever was counted or estimated", () => {
    expect(shownCount(counted(400), { rows: rows(3), previous: null, next: null }, true)).toEqual({ count: 3, exact: true, moreThan: false, tooSlowToCount: false });
    expect(shownCount(counted(0, { tooSlowToCount: true }), { rows: [], previous: null, next: null }, true)).toMatchObject({ count: 0, exact: true });
  });

  it("says what the pages prove (more than a page) only where an estimate says less; a larger estimate stays", () => {
    const full = { rows: rows(usersPerPage), previous: null, next: key };
    expect(shownCount(counted(20, { tooSlowToCount: true }), full, true)).toEqual({ count: usersPerPage, exact: false, moreThan: true, tooSlowToCount: true });
    expect(shownCount(counted(0), full, true)).toEqual({ count: usersPerPage, exact: false, moreThan: true, tooSlowToCount: false });
    // An estimate of 200 (within about 2×) says more than "more than 50" would.
    expect(shownCount(counted(200, { tooSlowToCount: true }), full, true)).toEqual(counted(200, { tooSlowToCount: true }));
    expect(shownCount(counted(exactCountLimit * 3, { tooSlowToCount: true }), full, true)).toMatchObject({ count: exactCountLimit * 3, moreThan: false });
  });

  it("is the count otherwise", () => {
    const full = { rows: rows(usersPerPage), previous: key, next: key };
    expect(shownCount(counted(1234, { exact: true }), full, false)).toEqual(counted(1234, { exact: true }));
  });
});
