import { describe, expect, it } from "vitest";
import type { ArgProperty } from "../../types";
import { addTask, EMPTY_DRAFT } from "./model";
import { template } from "./testing";
import {
  checkArg, checkInt, checkResource, checkTaskName, coerceArg, duplicateNames, fullMatchRegex, parseQuantity, validateTask,
} from "./validation";

const epochs: ArgProperty = { type: "integer", minimum: 1, maximum: 200, default: 20 };
const lr: ArgProperty = { type: "number", minimum: 0.00001, maximum: 1 };
const path: ArgProperty = { type: "string", pattern: "/[A-Za-z0-9._/-]{1,255}", maxLength: 20 };

describe("argument checks", () => {
  it("parses integers from text and enforces the range", () => {
    expect(coerceArg(epochs, " 12 ")).toEqual({ value: 12 });
    expect(checkArg(epochs, "12a", false)).toBe("expected an integer, got '12a'");
    expect(checkArg(epochs, "1.5", false)).toMatch(/integer/);
    expect(checkArg(epochs, "0", false)).toBe("must be >= 1");
    expect(checkArg(epochs, "201", false)).toBe("must be <= 200");
  });

  it("parses numbers like Python float()", () => {
    expect(coerceArg(lr, "1e-3")).toEqual({ value: 0.001 });
    expect(coerceArg(lr, ".5")).toEqual({ value: 0.5 });
    expect(checkArg(lr, "abc", false)).toMatch(/number/);
    expect(checkArg(lr, "2", false)).toBe("must be <= 1");
  });

  it("matches patterns against the whole value", () => {
    expect(checkArg(path, "/data/x", false)).toBeNull();
    expect(checkArg(path, "data/x", false)).toMatch(/pattern/);
    expect(checkArg(path, "/data/x y", false)).toMatch(/pattern/);
    expect(fullMatchRegex("a|b")!.test("ab")).toBe(false);
    expect(fullMatchRegex("(?P<x>a)(?P=x)")!.test("aa")).toBe(true);
  });

  it("leaves values with macros to the server", () => {
    expect(checkArg(path, "/data/{{ ds }}", false)).toBeNull();
    expect(coerceArg(epochs, "{{ params.epochs }}")).toEqual({ value: "{{ params.epochs }}" });
  });

  it("checks lengths in characters", () => {
    expect(checkArg(path, "/" + "a".repeat(20), false)).toBe("must have at most 20 characters");
    expect(checkArg({ type: "string", minLength: 2 }, "é", false)).toBe("must have at least 2 characters");
  });

  it("checks enums after converting to the type", () => {
    const mode: ArgProperty = { type: "string", enum: ["fast", "slow"] };
    expect(checkArg(mode, "fast", false)).toBeNull();
    expect(checkArg(mode, "medium", false)).toBe("must be one of 'fast', 'slow'");
    expect(coerceArg({ type: "integer", enum: [1, 2], minimum: 0, maximum: 9 }, "2")).toEqual({ value: 2 });
  });

  it("requires required arguments without a default only", () => {
    expect(checkArg({ type: "string" }, "", true)).toBe("is required");
    expect(checkArg(epochs, "", true)).toBeNull();
    expect(checkArg({ type: "string" }, "", false)).toBeNull();
    expect(coerceArg(epochs, "")).toEqual({});
  });

  it("converts booleans and arrays", () => {
    expect(coerceArg({ type: "boolean" }, "Yes")).toEqual({ value: true });
    expect(checkArg({ type: "boolean" }, "maybe", false)).toMatch(/boolean/);
    const packages: ArgProperty = { type: "array", items: { type: "string", pattern: "[a-z]+" }, maxItems: 2 };
    expect(coerceArg(packages, "numpy\n\nscipy\n")).toEqual({ value: ["numpy", "scipy"] });
    expect(coerceArg(packages, '["a", "b"]')).toEqual({ value: ["a", "b"] });
    expect(checkArg(packages, "a\nb\nc", false)).toBe("must have at most 2 items");
    expect(checkArg(packages, "a\nB1", false)).toMatch(/^item 2: does not match/);
    expect(checkArg(packages, "[1,", false)).toBe("is not a valid JSON list");
    expect(coerceArg({ type: "array", items: { type: "integer" } }, "1\n2")).toEqual({ value: [1, 2] });
  });
});

describe("resources", () => {
  it("parses Kubernetes quantities", () => {
    expect(parseQuantity("500m")).toBeCloseTo(0.5);
    expect(parseQuantity("4Gi")).toBe(4 * 2 ** 30);
    expect(parseQuantity("1e3")).toBe(1000);
    expect(parseQuantity("4 GB")).toBeNull();
  });

  it("mirrors the server's rules and the template maximum", () => {
    const max = { cpu: "8", memory: "32Gi", gpu: 2 };
    expect(checkResource("cpu", "500m", max)).toBeNull();
    expect(checkResource("cpu", "", max)).toBeNull();
    expect(checkResource("cpu", "0", max)).toMatch(/> 0/);
    expect(checkResource("cpu", "0.0005", max)).toMatch(/finer than 1m/);
    expect(checkResource("cpu", "9", max)).toBe("exceeds the template maximum 8");
    expect(checkResource("memory", "4", max)).toMatch(/below 4Mi/);
    expect(checkResource("memory", "2 Gi", max)).toMatch(/not a quantity/);
    expect(checkResource("memory", "32Gi", max)).toBeNull();
    expect(checkResource("gpu", "1.5", max)).toMatch(/whole number/);
    expect(checkResource("gpu", "3", max)).toMatch(/maximum/);
    expect(checkResource("gpu", "0", max)).toBeNull();
  });
});

describe("task fields", () => {
  it("checks names as DNS-1123 labels, unique", () => {
    expect(checkTaskName("train-1", false)).toBeNull();
    expect(checkTaskName("Train", false)).toMatch(/DNS-1123/);
    expect(checkTaskName("-a", false)).toMatch(/DNS-1123/);
    expect(checkTaskName("a".repeat(64), false)).toMatch(/63/);
    expect(checkTaskName("a", true)).toMatch(/another task/);
  });

  it("checks whole numbers in range", () => {
    expect(checkInt("5", 0, 100)).toBeNull();
    expect(checkInt("", 1, 10, true)).toBeNull();
    expect(checkInt("", 0, 10)).toBe("is required");
    expect(checkInt("2.5", 0, 10)).toBe("must be a whole number");
    expect(checkInt("101", 0, 100)).toBe("must be between 0 and 100");
  });

  it("collects every problem of a task by field", () => {
    const tpl = template(1, "xgboost", {
      args_schema: { properties: { epochs, data: { type: "string" } }, required: ["data"] },
    });
    let task = addTask(EMPTY_DRAFT, tpl, { x: 0, y: 0 }).draft.tasks[0];
    task = { ...task, name: "Bad", args: { epochs: "0", extra: "1" }, retries: "-1", timeout: "0",
      resources: { cpu: "100", memory: "", gpu: "" } };
    expect(validateTask(task, tpl, false)).toEqual({
      name: expect.stringMatching(/DNS/),
      "args.epochs": "must be >= 1",
      "args.data": "is required",
      "args.extra": "unknown argument",
      "resources.cpu": "exceeds the template maximum 8",
      retries: "must be between 0 and 100",
      timeout: "must be between 1 and 2592000",
    });
    expect(validateTask(task, undefined, false).template_id).toBeDefined();
  });

  it("finds duplicate names", () => {
    const tpl = template(1, "x");
    let draft = addTask(addTask(EMPTY_DRAFT, tpl, { x: 0, y: 0 }).draft, tpl, { x: 0, y: 0 }).draft;
    expect(duplicateNames(draft.tasks).size).toBe(0);
    draft = { ...draft, tasks: draft.tasks.map((t) => ({ ...t, name: "same" })) };
    expect([...duplicateNames(draft.tasks)]).toEqual(["same"]);
  });
});
