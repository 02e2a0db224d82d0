import { describe, expect, it } from "vitest";
import { paletteGroups } from "./Palette";
import { template } from "./testing";

const catalog = [
  template(1, "python", { category: "general" }),
  template(2, "notebook", { category: "notebook", kind: "notebook", pipeline_step: false }),
  template(3, "deploy-service", { category: "serving", kind: "service", pipeline_step: false }),
  template(4, "serve-model", { category: "serving", description: "asks for an inference service" }),
  template(5, "pytorch-ddp", { category: "training", kind: "pytorchjob" }),
];
const names = (groups: ReturnType<typeof paletteGroups>) => groups.map(([c, ts]) => [c, ts.map((t) => t.name)]);

describe("the palette", () => {
  it("offers only the templates a pipeline task may use, by category", () => {
    expect(names(paletteGroups(catalog, ""))).toEqual([
      ["general", ["python"]], ["serving", ["serve-model"]], ["training", ["pytorch-ddp"]],
    ]);
  });

  it("keeps the templates matching every word of the search", () => {
    expect(names(paletteGroups(catalog, "INFERENCE serv"))).toEqual([["serving", ["serve-model"]]]);
    expect(names(paletteGroups(catalog, "notebook"))).toEqual([]);
  });
});
