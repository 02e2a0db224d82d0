// The webhook part of the pipeline settings: the URL checked while typing (the server stays the
// authority: it also refuses private, loopback and link-local addresses), and the event filter.
import type { WebhookEvent } from "../../types";

/** In the server's order (myapp/models/pipeline.py WEBHOOK_EVENTS), with what each means. */
export const WEBHOOK_EVENTS: { value: WebhookEvent; label: string }[] = [
  { value: "run.failed", label: "Run failed" },
  { value: "run.succeeded", label: "Run succeeded" },
  { value: "run.cancelled", label: "Run cancelled (or skipped)" },
  { value: "task.failed", label: "Task failed (no retry left)" },
];

/** Shortcuts for the usual choices. */
export const EVENT_PRESETS: { label: string; events: WebhookEvent[] }[] = [
  { label: "Failures only", events: ["run.failed", "task.failed"] },
  { label: "Every finished run", events: ["run.failed", "run.succeeded", "run.cancelled"] },
];

/** Why the text is not a webhook URL the server could accept, or null (empty means no webhook). */
export function checkWebhookUrl(text: string): string | null {
  const value = text.trim();
  if (!value) return null;
  if (value.length > 2048) return "at most 2048 characters";
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return "must be an http(s) URL, e.g. https://hooks.example.com/myapp";
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") return "must be an http or https URL";
  if (!url.hostname) return "must name a host";
  return null;
}

/** The events with one turned on or off, in the server's order (what it stores). */
export function toggleEvent(events: readonly WebhookEvent[], event: WebhookEvent, on: boolean): WebhookEvent[] {
  const chosen = new Set(events);
  if (on) chosen.add(event);
  else chosen.delete(event);
  return WEBHOOK_EVENTS.map((e) => e.value).filter((e) => chosen.has(e));
}

export function checkEvents(events: readonly WebhookEvent[]): string | null {
  return events.length === 0 ? "choose at least one event" : null;
}

/** The server's reason for the events, whichever item it names (webhook_events, webhook_events[0], …). */
export function eventsReason(reasonFor: (field: string) => string | undefined, events: readonly unknown[]): string | undefined {
  return reasonFor("webhook_events") ?? events.map((_, i) => reasonFor(`webhook_events[${i}]`)).find(Boolean);
}
