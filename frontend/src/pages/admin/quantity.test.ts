import { describe, expect, it } from "vitest";
import { formatCores, formatGiB, formatGpus, gpuProblem, parseQuantity, quantityProblem } from "./quantity";

describe("parseQuantity", () => {
  it("reads plain numbers and decimal suffixes", () => {
    expect(parseQuantity("64")).toBe(64);
    expect(parseQuantity("0.5")).toBe(0.5);
    expect(parseQuantity("500m")).toBeCloseTo(0.5);
    expect(parseQuantity("2k")).toBe(2000);
    expect(parseQuantity("1M")).toBe(1e6);
    expect(parseQuantity("3G")).toBe(3e9);
    expect(parseQuantity("1T")).toBe(1e12);
  });
  it("reads binary suffixes", () => {
    expect(parseQuantity("1Ki")).toBe(1024);
    expect(parseQuantity("512Mi")).toBe(512 * 2 ** 20);
    expect(parseQuantity("256Gi")).toBe(256 * 2 ** 30);
    expect(parseQuantity("1.5Ti")).toBe(1.5 * 2 ** 40);
  });
  it("reads exponents and trims spaces", () => {
    expect(parseQuantity("1e3")).toBe(1000);
    expect(parseQuantity("5E-1")).toBeCloseTo(0.5);
    expect(parseQuantity(" 4Gi ")).toBe(4 * 2 ** 30);
  });
  it("refuses what Kubernetes refuses", () => {
    for (const bad of ["", "Gi", "4gi", "4 Gi", "4GB", "1.2.3", "abc", "4Gix", "e3"]) expect(parseQuantity(bad)).toBeNull();
  });
});

describe("quantityProblem", () => {
  it("accepts valid quantities", () => {
    expect(quantityProblem("500m", "cpu")).toBeNull();
    expect(quantityProblem("0", "cpu")).toBeNull();
    expect(quantityProblem("256Gi", "memory")).toBeNull();
  });
  it("explains the problem", () => {
    expect(quantityProblem("", "cpu")).toBe("is required");
    expect(quantityProblem("4 cores", "cpu")).toMatch(/not a quantity.*500m/);
    expect(quantityProblem("4GB", "memory")).toMatch(/256Gi/);
    expect(quantityProblem("-1", "cpu")).toBe("must not be negative");
    expect(quantityProblem("0.0005", "cpu")).toBe("is finer than 1m");
    expect(quantityProblem("1500u", "cpu")).toBe("is finer than 1m");
    expect(quantityProblem("2000u", "cpu")).toBeNull();
  });
});

describe("gpuProblem", () => {
  it("wants a whole number", () => {
    expect(gpuProblem("0")).toBeNull();
    expect(gpuProblem("8")).toBeNull();
    for (const bad of ["", "-1", "1.5", "two"]) expect(gpuProblem(bad)).not.toBeNull();
  });
});

describe("human units", () => {
  it("formats cores", () => {
    expect(formatCores(8000)).toBe("8 cores");
    expect(formatCores(1000)).toBe("1 core");
    expect(formatCores(3500)).toBe("3.5 cores");
    expect(formatCores(250)).toBe("0.25 cores");
    expect(formatCores(1)).toBe("<0.01 cores");
    expect(formatCores(0)).toBe("0 cores");
  });
  it("formats GiB", () => {
    expect(formatGiB(16 * 2 ** 30)).toBe("16 GiB");
    expect(formatGiB(2 ** 29)).toBe("0.5 GiB");
    expect(formatGiB(1000)).toBe("<0.01 GiB");
    expect(formatGiB(0)).toBe("0 GiB");
  });
  it("formats GPUs", () => {
    expect(formatGpus(1)).toBe("1 GPU");
    expect(formatGpus(0)).toBe("0 GPUs");
  });
});
