import { describe, expect, it } from "vitest";
import { checkEvents, checkWebhookUrl, eventsReason, EVENT_PRESETS, toggleEvent, WEBHOOK_EVENTS } from "./webhook";

describe("checkWebhookUrl", () => {
  it("accepts http(s) URLs and empty (no webhook)", () => {
    for (const ok of ["", "  ", "https://hooks.example.com/x?a=b", "http://10.0.0.1:8080/hook", "http://[::1]/"]) {
      expect(checkWebhookUrl(ok)).toBeNull();
    }
  });
  it("refuses other schemes, missing hosts and non-URLs", () => {
    expect(checkWebhookUrl("ftp://hooks.example.com/")).toBe("must be an http or https URL");
    expect(checkWebhookUrl("file:///etc/passwd")).toBe("must be an http or https URL");
    expect(checkWebhookUrl("hooks.example.com/x")).toMatch(/must be an http\(s\) URL/);
    expect(checkWebhookUrl(`https://h.example/${"a".repeat(2048)}`)).toBe("at most 2048 characters");
  });
});

describe("events", () => {
  it("toggles keep the server's order and no duplicates", () => {
    expect(toggleEvent(["task.failed"], "run.failed", true)).toEqual(["run.failed", "task.failed"]);
    expect(toggleEvent(["run.failed", "task.failed"], "run.failed", true)).toEqual(["run.failed", "task.failed"]);
    expect(toggleEvent(["run.failed", "task.failed"], "run.failed", false)).toEqual(["task.failed"]);
  });
  it("needs at least one", () => {
    expect(checkEvents([])).toBe("choose at least one event");
    expect(checkEvents(["run.succeeded"])).toBeNull();
  });
  it("presets name known events, in order", () => {
    const order = WEBHOOK_EVENTS.map((e) => e.value);
    for (const preset of EVENT_PRESETS) {
      expect(preset.events).toEqual(order.filter((e) => preset.events.includes(e)));
    }
  });
  it("finds the server's reason on the list or on one item", () => {
    const reasons: Record<string, string> = { "webhook_events[1]": "must be one of: run.failed" };
    expect(eventsReason((f) => reasons[f], ["run.failed", "x"])).toBe("must be one of: run.failed");
    expect(eventsReason((f) => ({ webhook_events: "name at least one event" } as Record<string, string>)[f], []))
      .toBe("name at least one event");
    expect(eventsReason(() => undefined, ["run.failed"])).toBeUndefined();
  });
});
