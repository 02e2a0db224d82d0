// The state of one list endpoint's rows, outside React so its reads, paging and polling can be tested
// with fake timers: reads one page (or every row), drops answers of reads it has moved past (a reload,
// another page), and after each answer plans the next read by its poll policy. `useResourceList`
// binds it to a component (subscribe = start, last unsubscribe = stop).
import { nextReadIn, type PollPolicy } from "./polling";

export interface Answer<T> {
  rows: T[];
  /** Rows the server has for these filters, over every page. */
  count: number;
}

/** Reads page `page` (0-based); a list read whole ignores it. */
export type ReadPage<T> = (page: number) => Promise<Answer<T>>;

export interface ListSnapshot<T> {
  /** Undefined until the first answer; a failed read keeps the last rows. */
  rows: T[] | undefined;
  count: number;
  error: unknown;
  /** A read is in flight. */
  loading: boolean;
  /** When the rows shown were read (ms since the epoch), to measure "idle for 5 min" against. */
  readAt: number;
  page: number;
}

export class ListStore<T> {
  private snapshot: ListSnapshot<T> = { rows: undefined, count: 0, error: null, loading: true, readAt: 0, page: 0 };
  private readonly listeners = new Set<() => void>();
  private timer: ReturnType<typeof setTimeout> | undefined;
  /** Number of the newest read; an answer to an older one is dropped. */
  private latest = 0;
  private running = false;

  constructor(private readonly read: ReadPage<T>, private readonly poll?: PollPolicy<T>,
    private readonly now: () => number = Date.now) {}

  getSnapshot = (): ListSnapshot<T> => this.snapshot;

  subscribe = (listener: () => void): (() => void) => {
    this.listeners.add(listener);
    if (!this.running) {
      this.running = true;
      this.fetch();
    }
    return () => {
      this.listeners.delete(listener);
      if (this.listeners.size === 0) this.stop();
    };
  };

  /** Reads again now (after a write), instead of at the planned time. */
  reload = (): void => {
    if (this.running) this.fetch();
  };

  setPage = (page: number): void => {
    this.update({ page: Math.max(0, page) });
    this.reload();
  };

  private stop(): void {
    this.running = false;
    this.latest += 1;
    clearTimeout(this.timer);
  }

  private fetch(): void {
    clearTimeout(this.timer);
    const mine = ++this.latest;
    this.update({ loading: true });
    this.read(this.snapshot.page).then(
      (answer) => this.settle(mine, { rows: answer.rows, count: answer.count, error: null, readAt: this.now() }),
      (error: unknown) => this.settle(mine, { error }),
    );
  }

  private settle(read: number, change: Partial<ListSnapshot<T>>): void {
    if (read !== this.latest) return;
    this.update({ ...change, loading: false });
    const delay = nextReadIn(this.snapshot.rows, this.poll);
    if (delay !== null) this.timer = setTimeout(() => this.fetch(), delay);
  }

  private update(change: Partial<ListSnapshot<T>>): void {
    this.snapshot = { ...this.snapshot, ...change };
    for (const listener of this.listeners) listener();
  }
}
