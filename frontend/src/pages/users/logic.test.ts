import { describe, expect, it } from "vitest";
import type { User } from "../../types";
import { displayName, filterUsers, newUsernameProblem, passwordProblem, selfLocks, waitText } from "./logic";

const user = (id: number, username: string, extra: Partial<User> = {}): User => ({
  id, username, first_name: username, last_name: "-", email: `${username}@example.org`, active: true,
  is_admin: false, sign_in_limited: false, last_login: null, login_count: null, created_on: null, ...extra,
});

describe("passwordProblem", () => {
  it("asks for at least 12 characters, like the server", () => {
    expect(passwordProblem("")).toBe("is required");
    expect(passwordProblem("12345678901")).toBe("must be at least 12 characters");
    expect(passwordProblem("123456789012")).toBeNull();
    expect(passwordProblem("x".repeat(256))).toBeNull();
    expect(passwordProblem("x".repeat(257))).toBe("must be at most 256 characters");
  });
  it("counts characters, not UTF-16 units", () => {
    expect(passwordProblem("🔑".repeat(11))).toBe("must be at least 12 characters");
    expect(passwordProblem("🔑".repeat(12))).toBeNull();
  });
});

describe("newUsernameProblem", () => {
  it("follows the server's rule", () => {
    expect(newUsernameProblem("")).toBe("is required");
    for (const ok of ["ada", "ada.l", "ada_l-2", "a@b", "0x"]) expect(newUsernameProblem(ok)).toBeNull();
    for (const bad of ["-ada", "ada l", "ada/l", ".x"]) expect(newUsernameProblem(bad)).toMatch(/letters, digits/);
    expect(newUsernameProblem("a".repeat(65))).toMatch(/at most 64/);
  });
});

describe("displayName", () => {
  it("joins first and last name, leaving out the command line's placeholder", () => {
    expect(displayName({ first_name: "Grace", last_name: "Hopper" })).toBe("Grace Hopper");
    expect(displayName({ first_name: "ada", last_name: "-" })).toBe("ada");
    expect(displayName({ first_name: "Ada", last_name: "" })).toBe("Ada");
  });
});

describe("selfLocks", () => {
  it("locks deactivating and un-admining yourself only", () => {
    expect(selfLocks(user(1, "me"), 1)).toEqual({
      deactivate: "You cannot deactivate yourself.", removeAdmin: "You cannot remove your own admin flag." });
    expect(selfLocks(user(2, "other"), 1)).toEqual({ deactivate: null, removeAdmin: null });
    expect(selfLocks(user(2, "other"), undefined)).toEqual({ deactivate: null, removeAdmin: null });
  });
});

describe("filterUsers", () => {
  const users = [user(1, "zed", { email: "z@corp.io" }), user(2, "ann", { first_name: "Ann", last_name: "Lee" }),
    user(3, "bob")];
  it("sorts by username and matches username, name or email", () => {
    expect(filterUsers(users, "").map((u) => u.username)).toEqual(["ann", "bob", "zed"]);
    expect(filterUsers(users, "LEE").map((u) => u.username)).toEqual(["ann"]);
    expect(filterUsers(users, "corp").map((u) => u.username)).toEqual(["zed"]);
    expect(filterUsers(users, " nobody ")).toEqual([]);
  });
});

describe("waitText", () => {
  it("says when a limited address may try again", () => {
    expect(waitText(0)).toBe("now");
    expect(waitText(7)).toBe("in 7 s");
    expect(waitText(119)).toBe("in 119 s");
    expect(waitText(900)).toBe("in 15 min");
  });
});
