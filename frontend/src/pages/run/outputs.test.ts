import { describe, expect, it } from "vitest";
import { failure, type FetchIo, fileUrl, parseCsv, retryDelay, untilFetched } from "./OutputsTab";
import { changedParams } from "./RunDialog";
import { lastValues, metricNames, stepPoints } from "./stepSeries";

describe("outputs", () => {
  it("parses CSV previews, quotes included", () => {
    expect(parseCsv('a,b\n1,"x, ""y"""\n\n2,3\n')).toEqual([["a", "b"], ["1", 'x, "y"'], ["2", "3"]]);
    expect(parseCsv("a\tb\n1\t2", "\t")).toEqual([["a", "b"], ["1", "2"]]);
  });

  it("addresses a file by its path in the query", () => {
    expect(fileUrl(5, "dir/a b.csv", true)).toBe("/api/v1/task_run/5/output?path=dir%2Fa+b.csv&preview=1");
    expect(fileUrl(5, "m.pt")).toBe("/api/v1/task_run/5/output?path=m.pt");
  });

  it("waits as long as a fetch from the cluster asks, within bounds", () => {
    expect(retryDelay("5")).toBe(5);
    expect(retryDelay(null)).toBe(5);
    expect(retryDelay("junk")).toBe(5);
    expect(retryDelay("0")).toBe(5);
    expect(retryDelay("3600")).toBe(60);
  });

  it("asks again after each 202's Retry-After until the file (or its preview) is here", async () => {
    const answers = [
      new Response(JSON.stringify({ message: "being fetched" }), { status: 202, headers: { "Retry-After": "2" } }),
      new Response(JSON.stringify({ message: "being fetched" }), { status: 202 }),
      new Response("step 0 loss 1.0\n", { status: 200 }),
    ];
    const asked: RequestInit[] = [];
    const slept: number[] = [];
    const io: FetchIo = {
      fetch: async (_url, init) => { asked.push(init); return answers.shift() as Response; },
      sleep: async (ms) => { slept.push(ms); },
    };
    let told = 0;
    const url = fileUrl(5, "train.log", true);
    const answer = await untilFetched(url, "GET", new AbortController().signal, () => { told++; }, io);
    expect(await answer.text()).toBe("step 0 loss 1.0\n");
    expect(slept).toEqual([2000, 5000]);
    expect(told).toBe(2);
    expect(asked.map((init) => init.method)).toEqual(["GET", "GET", "GET"]);
  });

  it("stops asking once the view moves on", async () => {
    const control = new AbortController();
    let asked = 0;
    const io: FetchIo = {
      fetch: async () => { asked++; return new Response(null, { status: 202 }); },
      sleep: async () => { control.abort(); throw new Error("aborted"); },
    };
    await expect(untilFetched("/f", "HEAD", control.signal, () => undefined, io)).rejects.toThrow("aborted");
    expect(asked).toBe(1);
  });

  it("says why a fetch from the cluster failed, asking with GET after a bodiless HEAD", async () => {
    const asked: (string | undefined)[] = [];
    const io: FetchIo = {
      fetch: async (_url, init) => {
        asked.push(init.method);
        return new Response(JSON.stringify({ message: "fetching 'm.bin' from the cluster failed: gone" }),
          { status: 503 });
      },
      sleep: async () => undefined,
    };
    const signal = new AbortController().signal;
    const head = new Response(null, { status: 503, statusText: "Service Unavailable" });
    expect(await failure(head, "/f", "HEAD", signal, io)).toBe("fetching 'm.bin' from the cluster failed: gone");
    expect(asked).toEqual([undefined]);  // one GET
    const get = new Response(JSON.stringify({ message: "no such file" }), { status: 404 });
    expect(await failure(get, "/f", "GET", signal, io)).toBe("no such file");
    expect(asked).toHaveLength(1);
    const bare = new Response("oops", { status: 500, statusText: "Internal Server Error" });
    expect(await failure(bare, "/f", "GET", signal, io)).toBe("500 Internal Server Error");
  });

  it("turns reported metrics into series by step", () => {
    const metrics = [
      { step: 2, name: "loss", value: 0.5 }, { step: 1, name: "loss", value: 0.9 },
      { step: 2, name: "loss", value: 0.4 }, { step: 3, name: "acc", value: 0.8 },
    ];
    expect(metricNames(metrics)).toEqual(["loss", "acc"]);
    expect(stepPoints(metrics, "loss")).toEqual([{ t: 1, v: 0.9 }, { t: 2, v: 0.4 }]);
    expect(lastValues(metrics)).toEqual({ loss: 0.4, acc: 0.8 });
  });

  it("sends only the parameters the user changed", () => {
    expect(changedParams({ lr: 0.05, epochs: 3 }, { lr: "0.01", epochs: "3" })).toEqual({ lr: "0.01" });
  });
});
