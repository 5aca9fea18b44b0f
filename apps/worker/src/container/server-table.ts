import type { Logger } from '@nvcf/service-kit';
import type { ServerEntry } from './server-entry.ts';
import { checkHealth } from './server-health.ts';

export interface ServerTableOptions {
  /** How often every server's health is checked; absent: never on a timer. */
  intervalMs: number | undefined;
  log: Logger;
  /** A server's health changed. */
  onChange(): void;
}

/** The server serving each version, and whether each answers its health check: one timer checks them all. */
export class ServerTable {
  readonly #entries = new Map<string, ServerEntry>();
  readonly #log: Logger;
  readonly #onChange: () => void;
  readonly #timer: NodeJS.Timeout | undefined;
  #checking: Promise<void> | undefined;

  constructor(opts: ServerTableOptions) {
    this.#log = opts.log;
    this.#onChange = opts.onChange;
    this.#timer = opts.intervalMs === undefined ? undefined : setInterval(() => void this.checkAll(), opts.intervalMs);
    this.#timer?.unref();
  }

  get(versionId: string): ServerEntry | undefined {
    return this.#entries.get(versionId);
  }

  has(versionId: string): boolean {
    return this.#entries.has(versionId);
  }

  set(versionId: string, entry: ServerEntry): void {
    this.#entries.set(versionId, entry);
  }

  /** Serves the version with a server just opened, and checks it at once. */
  async add(versionId: string, entry: ServerEntry): Promise<void> {
    this.#entries.set(versionId, entry);
    await this.check(entry);
  }

  delete(versionId: string): void {
    this.#entries.delete(versionId);
  }

  entries(): IterableIterator<[string, ServerEntry]> {
    return this.#entries.entries();
  }

  /** Checks one server's health; true when it changed. */
  async check(entry: ServerEntry): Promise<boolean> {
    const ok = await checkHealth(entry.healthUrl, entry.spec.health.expectedStatusCode, entry.spec.health.timeoutMs);
    if (ok) entry.process?.healthy();
    if (ok === entry.healthy) return false;
    entry.healthy = ok;
    this.#log.info(
      { server: entry.base.href, healthy: ok },
      ok ? 'inference server healthy' : 'inference server unhealthy',
    );
    return true;
  }

  /** Checks every server's health now (one pass at a time). */
  checkAll(): Promise<void> {
    this.#checking ??= Promise.all([...this.#entries.values()].map((entry) => this.check(entry)))
      .then((changes) => {
        if (changes.some(Boolean)) this.#onChange();
      })
      .finally(() => {
        this.#checking = undefined;
      });
    return this.#checking;
  }

  /** Stops the timer and waits for a pass under way. */
  async stopChecks(): Promise<void> {
    clearInterval(this.#timer);
    await this.#checking;
  }

  /** Every server, no longer served. */
  takeAll(): ServerEntry[] {
    const all = [...this.#entries.values()];
    this.#entries.clear();
    return all;
  }
}
