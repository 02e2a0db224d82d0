import { describe, expect, it } from "vitest";
import { retryDelaySeconds } from "./hooks";

describe("retryDelaySeconds", () => {
  it("starts at 5 s, doubles per refusal in a row and stops growing at a minute", () => {
    expect([1, 2, 3, 4, 5, 6, 10].map(retryDelaySeconds)).toEqual([5, 10, 20, 40, 60, 60, 60]);
  });
});
