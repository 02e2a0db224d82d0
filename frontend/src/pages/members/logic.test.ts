import { describe, expect, it } from "vitest";
import type { Member } from "../../types";
import { isLastOwner, memberControls, ownerCount, sortMembers, usernameProblem } from "./logic";

const member = (id: number, username: string, role: Member["role"]): Member => ({ id, user_id: id + 100, username, role });

describe("memberControls", () => {
  it("lets owners and admins manage", () => {
    expect(memberControls("owner", false)).toEqual({ canManage: true, reason: null });
    expect(memberControls("viewer", true)).toEqual({ canManage: true, reason: null });
    expect(memberControls(null, true).canManage).toBe(true);
  });
  it("gives viewers and developers the reason their controls are disabled", () => {
    for (const role of ["viewer", "developer"] as const) {
      const controls = memberControls(role, false);
      expect(controls.canManage).toBe(false);
      expect(controls.reason).toContain("Only owners");
      expect(controls.reason).toContain(`your role here is ${role}`);
    }
    expect(memberControls(undefined, false).reason).toContain("not a member");
  });
});

describe("owners", () => {
  const members = [member(1, "ann", "owner"), member(2, "bob", "viewer"), member(3, "cy", "developer")];
  it("counts them and finds the last one", () => {
    expect(ownerCount(members)).toBe(1);
    expect(isLastOwner(members[0], members)).toBe(true);
    expect(isLastOwner(members[1], members)).toBe(false);
    const two = [...members, member(4, "dee", "owner")];
    expect(isLastOwner(two[0], two)).toBe(false);
  });
  it("sorts owners first, then by username", () => {
    const sorted = sortMembers([member(2, "bob", "viewer"), member(5, "al", "viewer"), member(3, "cy", "developer"),
      member(1, "zed", "owner")]);
    expect(sorted.map((m) => m.username)).toEqual(["zed", "cy", "al", "bob"]);
  });
});

describe("usernameProblem", () => {
  it("requires a username without spaces", () => {
    expect(usernameProblem("")).toBe("is required");
    expect(usernameProblem("   ")).toBe("is required");
    expect(usernameProblem("a b")).toMatch(/no spaces/);
    expect(usernameProblem(" ada ")).toBeNull();
    expect(usernameProblem("ada-1")).toBeNull();
  });
});
