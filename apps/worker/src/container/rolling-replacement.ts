import { setTimeout as sleep } from 'node:timers/promises';
import type { ContainerSpec, FunctionVersion } from '@nvcf/control-store';
import type { Logger } from '@nvcf/service-kit';
import { type ServerEntry, stopEntry } from './server-entry.ts';
import type { ServerOpener } from './server-opener.ts';
import type { ServerTable } from './server-table.ts';
import type { ReadSecrets } from './version-secrets.ts';

/** A replacement server is checked this often at first, then less often up to the health interval. */
const REPLACEMENT_FIRST_CHECK_MS = 50;

export interface RollingReplacementOptions {
  table: ServerTable;
  opener: ServerOpener;
  /** The health interval: a replacement is checked at most this far apart. */
  intervalMs: number;
  log: Logger;
  /** A version is served again. */
  onChange(): void;
}

/**
 * A running process server's secrets changed: a new server starts with them beside it and takes the version over
 * once healthy, and the one it replaced stops once the requests it holds are answered, as a rolling update does.
 */
export class RollingReplacement {
  readonly #opts: RollingReplacementOptions;
  /** Process servers starting with changed secrets, by version: each takes its version over once healthy. */
  readonly #replacing = new Map<string, ServerEntry>();
  /** Replaced servers finishing the requests they hold before they stop. */
  readonly #retirements = new Set<Promise<void>>();
  readonly #retiring = new Set<ServerEntry>();
  #closing = false;

  constructor(opts: RollingReplacementOptions) {
    this.#opts = opts;
  }

  /**
   * A new server starts with the secrets beside the running one and takes the version over once healthy
   * (`takeOver`), so requests meanwhile are still answered. One that serves nothing now is simply replaced.
   */
  async replace(
    fv: FunctionVersion & { container: ContainerSpec },
    running: ServerEntry,
    secrets: ReadSecrets,
  ): Promise<void> {
    const { table, opener, log } = this.#opts;
    if (this.#replacing.get(fv.versionId)?.secretsDigest === secrets.digest) return;
    await this.cancel(fv.versionId);
    if (!running.healthy) {
      log.info({ versionId: fv.versionId }, "the function's secrets changed; restarting its server");
      table.delete(fv.versionId);
      await stopEntry(running);
      await table.add(fv.versionId, await opener.open(fv, secrets));
      return;
    }
    log.info(
      { versionId: fv.versionId },
      "the function's secrets changed; starting a server with them beside the running one",
    );
    const next = await opener.open(fv, secrets);
    this.#replacing.set(fv.versionId, next);
    this.#takeOver(fv.versionId, next).catch((err: unknown) =>
      log.error({ err, versionId: fv.versionId }, 'replacing the server with the new secrets failed'),
    );
  }

  /** Stops the version's replacement, if one is starting. */
  async cancel(versionId: string): Promise<void> {
    const pending = this.#replacing.get(versionId);
    if (!pending) return;
    this.#replacing.delete(versionId);
    await stopEntry(pending);
  }

  /** Stops the replacements of versions no longer wanted. */
  async cancelUnwanted(wanted: ReadonlySet<string>): Promise<void> {
    for (const versionId of this.#replacing.keys()) if (!wanted.has(versionId)) await this.cancel(versionId);
  }

  /** From now on a replaced server stops at once. */
  beginClose(): void {
    this.#closing = true;
  }

  /** Stops every replacement and every retiring server without waiting for their requests. */
  close(): Promise<unknown> {
    for (const entry of this.#retiring) entry.onIdle?.();
    const pending = [...this.#replacing.values()];
    this.#replacing.clear();
    return Promise.all([...pending.map(stopEntry), ...this.#retirements]);
  }

  /** Checks a replacement until it is healthy, then routes its version to it and retires the server it replaces. */
  async #takeOver(versionId: string, next: ServerEntry): Promise<void> {
    const { table, intervalMs, log } = this.#opts;
    for (let delay = REPLACEMENT_FIRST_CHECK_MS; this.#replacing.get(versionId) === next; ) {
      await table.check(next);
      if (next.healthy) break;
      await sleep(delay);
      if (delay < intervalMs && delay * 2 >= intervalMs) {
        log.warn(
          { versionId, server: next.base.href },
          'the server with the new secrets is not healthy yet; the running one keeps serving until it is',
        );
      }
      delay = Math.min(delay * 2, intervalMs);
    }
    // Cancelled meanwhile: a newer set of secrets, the version unlisted, or the worker closing.
    if (this.#replacing.get(versionId) !== next) return;
    this.#replacing.delete(versionId);
    const old = table.get(versionId);
    table.set(versionId, next);
    log.info({ versionId, server: next.base.href }, 'the server with the new secrets took over');
    if (old) this.#retire(old);
    // The one it replaced had stopped answering meanwhile: the version is served again.
    if (!old?.healthy) this.#opts.onChange();
  }

  /** Stops a replaced server once the requests it holds are answered (or at once when the worker closes). */
  #retire(entry: ServerEntry): void {
    this.#retiring.add(entry);
    const done = (async () => {
      if (entry.inFlight > 0 && !this.#closing) {
        await new Promise<void>((resolve) => {
          entry.onIdle = resolve;
        });
      }
      this.#retiring.delete(entry);
      await stopEntry(entry);
    })();
    this.#retirements.add(done);
    void done.finally(() => this.#retirements.delete(done));
  }
}
