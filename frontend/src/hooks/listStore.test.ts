import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { ListStore, type Answer } from "./listStore";
import type { PollPolicy } from "./polling";

interface Row {
  id: number;
  state: "building" | "done";
}

const POLL: PollPolicy<Row> = { busy: (r) => r.state === "building", busyMs: 2000 };

/** A list endpoint whose answers the test gives one by one, recording the pages asked for. */
function endpoint() {
  const asked: number[] = [];
  const pending: { resolve: (a: Answer<Row>) => void; reject: (e: unknown) => void }[] = [];
  const read = (page: number) => {
    asked.push(page);
    return new Promise<Answer<Row>>((resolve, reject) => pending.push({ resolve, reject }));
  };
  const answer = async (rows: Row[], count = rows.length) => {
    pending.shift()?.resolve({ rows, count });
    await vi.advanceTimersByTimeAsync(0);
  };
  const fail = async (error: unknown) => {
    pending.shift()?.reject(error);
    await vi.advanceTimersByTimeAsync(0);
  };
  return { asked, pending, read, answer, fail };
}

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

describe("ListStore", () => {
  it("is loading until the first answer, then shows its rows and count", async () => {
    const api = endpoint();
    const store = new ListStore(api.read, POLL, () => 1234);
    expect(store.getSnapshot()).toMatchObject({ rows: undefined, loading: true });
    const seen = vi.fn();
    store.subscribe(seen);
    expect(api.asked).toEqual([0]);
    await api.answer([{ id: 1, state: "done" }], 40);
    expect(store.getSnapshot()).toMatchObject({ rows: [{ id: 1, state: "done" }], count: 40, loading: false,
      error: null, readAt: 1234 });
    expect(seen).toHaveBeenCalled();
  });

  it("keeps the last rows and shows the error when a read fails", async () => {
    const api = endpoint();
    const store = new ListStore(api.read);
    store.subscribe(() => undefined);
    await api.answer([{ id: 1, state: "done" }]);
    store.reload();
    await api.fail(new Error("server down"));
    expect(store.getSnapshot()).toMatchObject({ rows: [{ id: 1, state: "done" }], loading: false });
    expect(String(store.getSnapshot().error)).toContain("server down");
    store.reload();
    await api.answer([]);
    expect(store.getSnapshot()).toMatchObject({ rows: [], error: null });
  });

  it("polls while a row is transitional and stops once none is", async () => {
    const api = endpoint();
    const store = new ListStore(api.read, POLL);
    store.subscribe(() => undefined);
    await api.answer([{ id: 1, state: "building" }]);
    await vi.advanceTimersByTimeAsync(1999);
    expect(api.asked).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(api.asked).toHaveLength(2);
    // No second read is planned while one is in flight, however slow.
    await vi.advanceTimersByTimeAsync(10_000);
    expect(api.asked).toHaveLength(2);
    await api.answer([{ id: 1, state: "done" }]);
    await vi.advanceTimersByTimeAsync(60_000);
    expect(api.asked).toHaveLength(2);
    // A write's reload reads at once, and a new transitional row starts the polling again.
    store.reload();
    await api.answer([{ id: 1, state: "done" }, { id: 2, state: "building" }]);
    await vi.advanceTimersByTimeAsync(2000);
    expect(api.asked).toHaveLength(4);
  });

  it("polls at the idle pace when one is given, also after a failed first read", async () => {
    const api = endpoint();
    const store = new ListStore(api.read, { ...POLL, idleMs: 15_000 });
    store.subscribe(() => undefined);
    await api.fail(new Error("down"));
    await vi.advanceTimersByTimeAsync(14_999);
    expect(api.asked).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(api.asked).toHaveLength(2);
  });

  it("never polls without a policy", async () => {
    const api = endpoint();
    const store = new ListStore(api.read);
    store.subscribe(() => undefined);
    await api.answer([{ id: 1, state: "building" }]);
    await vi.advanceTimersByTimeAsync(60_000);
    expect(api.asked).toHaveLength(1);
  });

  it("reads the page asked for and drops the answer of the page it left", async () => {
    const api = endpoint();
    const store = new ListStore(api.read);
    store.subscribe(() => undefined);
    await api.answer([{ id: 1, state: "done" }], 60);
    store.setPage(1);
    store.setPage(2);
    expect(api.asked).toEqual([0, 1, 2]);
    expect(store.getSnapshot()).toMatchObject({ page: 2, loading: true });
    await api.answer([{ id: 26, state: "done" }], 60);  // page 1's late answer
    expect(store.getSnapshot().rows).toEqual([{ id: 1, state: "done" }]);
    await api.answer([{ id: 51, state: "done" }], 60);
    expect(store.getSnapshot()).toMatchObject({ page: 2, rows: [{ id: 51, state: "done" }], loading: false });
    store.setPage(-1);
    expect(api.asked.at(-1)).toBe(0);
  });

  it("stops reading and polling when the last subscriber leaves", async () => {
    const api = endpoint();
    const store = new ListStore(api.read, POLL);
    const leave = store.subscribe(() => undefined);
    await api.answer([{ id: 1, state: "building" }]);
    leave();
    await vi.advanceTimersByTimeAsync(60_000);
    store.reload();
    expect(api.asked).toHaveLength(1);
    // An answer in flight when it stopped is dropped.
    const again = store.subscribe(() => undefined);
    expect(api.asked).toHaveLength(2);
    again();
    await api.answer([{ id: 9, state: "done" }]);
    expect(store.getSnapshot().rows).toEqual([{ id: 1, state: "building" }]);
  });
});
