/**
 * Many deadlines, one timer: a binary min-heap of (time, callback) and a single setTimeout armed for the
 * earliest. Long-polls register thousands of deadlines; a timer each would cost a handle per request.
 * Cancelled entries are dropped lazily when they reach the top.
 */
export interface DeadlineHandle {
  cancel(): void;
}

interface Entry {
  at: number;
  fire: () => void;
  cancelled: boolean;
}

export class DeadlineQueue {
  #heap: Entry[] = [];
  #timer: NodeJS.Timeout | undefined;
  #armedAt = Number.POSITIVE_INFINITY;
  #now: () => number;

  constructor(now: () => number = Date.now) {
    this.#now = now;
  }

  get size(): number {
    return this.#heap.length;
  }

  add(at: number, fire: () => void): DeadlineHandle {
    const entry: Entry = { at, fire, cancelled: false };
    this.#push(entry);
    if (at < this.#armedAt) this.#arm();
    return {
      cancel: () => {
        entry.cancelled = true;
      },
    };
  }

  /** Stops the timer; pending deadlines never fire. */
  clear(): void {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#armedAt = Number.POSITIVE_INFINITY;
    this.#heap = [];
  }

  #arm(): void {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#armedAt = Number.POSITIVE_INFINITY;
    while (this.#heap[0]?.cancelled) this.#pop();
    const head = this.#heap[0];
    if (!head) return;
    this.#armedAt = head.at;
    this.#timer = setTimeout(() => this.#expire(), Math.max(0, head.at - this.#now()));
    // Deadlines alone must not keep a process alive.
    this.#timer.unref();
  }

  #expire(): void {
    const now = this.#now();
    for (let head = this.#heap[0]; head && head.at <= now; head = this.#heap[0]) {
      this.#pop();
      if (!head.cancelled) head.fire();
    }
    this.#arm();
  }

  #push(e: Entry): void {
    const h = this.#heap;
    h.push(e);
    let i = h.length - 1;
    while (i > 0) {
      const p = (i - 1) >> 1;
      const parent = h[p] as Entry;
      if (parent.at <= e.at) break;
      h[i] = parent;
      i = p;
    }
    h[i] = e;
  }

  #pop(): Entry | undefined {
    const h = this.#heap;
    const top = h[0];
    const last = h.pop();
    if (h.length === 0 || !last) return top;
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= h.length) break;
      const r = l + 1;
      const c = r < h.length && (h[r] as Entry).at < (h[l] as Entry).at ? r : l;
      if ((h[c] as Entry).at >= last.at) break;
      h[i] = h[c] as Entry;
      i = c;
    }
    h[i] = last;
    return top;
  }
}
