// The one way the UI talks to the server: JSON over fetch, same-origin session cookie,
// CSRF token on writes, errors as ApiError carrying the server's {field, reason} list.
import type { ErrorBody, FieldReason, Page } from "../types";

export type { FieldReason };

export class ApiError extends Error {
  readonly status: number;
  readonly errors: FieldReason[];

  constructor(status: number, message: string, errors: FieldReason[] = []) {
    super(message);
    this.status = status;
    this.errors = errors;
  }

  /** The reason the server gave for one field, if any. */
  reasonFor(field: string): string | undefined {
    return this.errors.find((e) => e.field === field)?.reason;
  }
}

let csrfToken = "";

export function setCsrfToken(token: string): void {
  csrfToken = token;
}

/** For requests outside `api()` that must send it too (the Services page's test panel reads headers). */
export function getCsrfToken(): string {
  return csrfToken;
}

/** Fired when the server answers 401: the session ended; the app shows the login page. */
export const UNAUTHORIZED_EVENT = "myapp:unauthorized";

type Method = "GET" | "POST" | "PUT" | "DELETE";

export interface RequestOptions {
  method?: Method;
  body?: unknown;
  signal?: AbortSignal;
}

export async function api<T>(path: string, options: RequestOptions = {}): Promise<T> {
  const method = options.method ?? "GET";
  const headers: Record<string, string> = { Accept: "application/json" };
  // A FormData body (a file upload) is sent as multipart/form-data, with the boundary the browser sets.
  const form = options.body instanceof FormData;
  if (options.body !== undefined && !form) headers["Content-Type"] = "application/json";
  if (method !== "GET") headers["X-CSRFToken"] = csrfToken;
  const response = await fetch(path, {
    method,
    headers,
    credentials: "same-origin",
    body: options.body === undefined ? undefined : form ? (options.body as FormData) : JSON.stringify(options.body),
    signal: options.signal,
  });
  const text = await response.text();
  let data: unknown = null;
  if (text) {
    try {
      data = JSON.parse(text);
    } catch {
      data = { message: text.slice(0, 200) };
    }
  }
  if (!response.ok) {
    // Answers from outside the API routes may say `msg` (flask-jwt-extended's default) instead of `message`.
    const body = (data ?? {}) as Partial<ErrorBody> & { msg?: string };
    if (response.status === 401) window.dispatchEvent(new Event(UNAUTHORIZED_EVENT));
    throw new ApiError(response.status, body.message ?? body.msg ?? response.statusText, body.errors ?? []);
  }
  return data as T;
}

/** Query string from an object, skipping undefined/empty values. */
export function qs(params: Record<string, string | number | boolean | undefined | null>): string {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) {
    if (value !== undefined && value !== null && value !== "") search.set(key, String(value));
  }
  const text = search.toString();
  return text ? `?${text}` : "";
}

/** One page of a list endpoint (/api/v1/<resource>/?filters&page&page_size&order). */
export function list<T>(resource: string, params: Record<string, string | number | boolean | undefined> = {}):
  Promise<Page<T>> {
  return api<Page<T>>(`/api/v1/${resource}/${qs({ page_size: 100, ...params })}`);
}

/** Every row of a list endpoint, following pages (for small sets: tasks of a pipeline, templates). */
export async function listAll<T>(resource: string, params: Record<string, string | number | boolean | undefined> = {}):
  Promise<T[]> {
  const items: T[] = [];
  for (let page = 0; ; page++) {
    const result = await list<T>(resource, { ...params, page, page_size: 100 });
    items.push(...result.items);
    if (items.length >= result.count || result.items.length === 0) return items;
  }
}

/** A human sentence for an error: the message plus each field's reason. */
export function describeError(error: unknown): string {
  if (error instanceof ApiError) {
    const details = error.errors.map((e) => `${e.field}: ${e.reason}`).join("; ");
    return details && !error.message.includes(details) ? `${error.message} (${details})` : error.message;
  }
  return error instanceof Error ? error.message : String(error);
}
