import type { ContainerSpec, FunctionVersion } from '@nvcf/control-store';
import type { Logger } from '@nvcf/service-kit';
import type { ProcessTrust } from './process-trust.ts';
import { RollingReplacement } from './rolling-replacement.ts';
import { type ServerEntry, type ServerInstance, stopEntry } from './server-entry.ts';
import { ServerOpener } from './server-opener.ts';
import type { ServerSandbox } from './server-sandbox.ts';
import { ServerTable } from './server-table.ts';
import { createSidecarSecrets, type SidecarSecrets } from './sidecar-secrets.ts';
import { VersionRefusals } from './version-refusals.ts';
import { NO_SECRETS, type ReadSecrets, type VersionSecrets } from './version-secrets.ts';

export type { ServerInstance } from './server-entry.ts';

export interface ContainerServers {
  /** How this worker runs container functions ('none': it serves none). */
  readonly mode: 'sidecar' | 'process' | 'none';
  /**
   * The container versions this worker should serve now, with their secrets: servers of new ones start (process
   * mode), those of versions no longer listed stop, and a version whose secrets changed gets them (a process: a
   * new one starts beside the running one, takes over once healthy, and the old one stops once its requests are
   * answered, as a rolling update does; a sidecar's `secrets.json` is rewritten). A version whose secrets cannot be
   * read here is not started (one already running keeps what it had). `instance` then has each, healthy or not.
   */
  want(
    versions: readonly (FunctionVersion & { container: ContainerSpec })[],
    secrets?: ReadonlyMap<string, VersionSecrets>,
  ): Promise<void>;
  instance(versionId: string): ServerInstance | undefined;
  /** Checks every server's health now (the periodic pass calls it too). */
  checkAll(): Promise<void>;
  close(): Promise<void>;
}

export interface ContainerServersOptions {
  /** Sidecar mode: the server's address. */
  url: string;
  /** Process mode. */
  processes: boolean;
  /** Process mode: whose `containerArgs` run on this host (process-trust.ts). */
  trust: ProcessTrust;
  /** Process mode: each server's user and confinement (default: a plain child process of the worker's user). */
  sandbox?: ServerSandbox;
  /**
   * Process mode: each server's home and temporary directory is `<workDir>/.server-<versionId>-<n>` (never a request
   * id; `n` counts this worker's starts, as a replacement runs beside the server it replaces).
   */
  workDir: string;
  /** How often every server's health is checked (the heartbeat's period: ACTIVE follows health). */
  intervalMs: number;
  /** Sidecar mode: where the served version's `secrets.json` goes ('' or absent: the sidecar gets no secrets). */
  secretsDir?: string;
  log: Logger;
  /** A server's health changed: the caller re-syncs which versions it consumes. */
  onChange(): void;
}

/** The parts `want` reconciles. */
interface Parts {
  table: ServerTable;
  opener: ServerOpener;
  replacement: RollingReplacement;
  refusals: VersionRefusals;
  sidecarSecrets: SidecarSecrets;
}

/**
 * The inference servers of the container versions a worker serves, and whether each answers its health check.
 * Sidecar mode (NVCF's own architecture: the server is a container beside the worker, at `WORKER_CONTAINER_URL`)
 * or process mode (the worker runs `containerArgs` itself on a free port). One timer checks every server.
 */
export function createContainerServers(opts: ContainerServersOptions): ContainerServers {
  const mode = opts.url ? 'sidecar' : opts.processes ? 'process' : 'none';
  const { log, onChange } = opts;
  // A worker that serves no container functions checks nothing.
  const table = new ServerTable({ intervalMs: mode === 'none' ? undefined : opts.intervalMs, log, onChange });
  const sidecarSecrets = createSidecarSecrets(mode === 'sidecar' ? (opts.secretsDir ?? '') : '', log);
  const sandbox: ServerSandbox = opts.sandbox ?? { kind: 'none', writable: [] };
  const opener = new ServerOpener({
    mode,
    url: opts.url,
    workDir: opts.workDir,
    sandbox,
    sidecarSecrets,
    log,
    onChange,
  });
  const replacement = new RollingReplacement({ table, opener, intervalMs: opts.intervalMs, log, onChange });
  const parts: Parts = {
    table,
    opener,
    replacement,
    refusals: new VersionRefusals(mode, opts.trust, log),
    sidecarSecrets,
  };
  return {
    mode,
    async want(versions, secretsOf = new Map()) {
      if (mode === 'none') return;
      const wanted = new Set<string>();
      for (const fv of versions) await wantVersion(parts, fv, secretsOf.get(fv.versionId) ?? NO_SECRETS, wanted);
      await replacement.cancelUnwanted(wanted);
      await stopUnwanted(parts, wanted);
      parts.refusals.forgetUnlisted(versions);
    },
    instance: (versionId) => table.get(versionId),
    checkAll: () => table.checkAll(),
    async close() {
      replacement.beginClose();
      await table.stopChecks();
      const replacements = replacement.close();
      await Promise.all([...table.takeAll().map(stopEntry), replacements]);
    },
  };
}

/** Serves one listed version (adding it to `wanted`) unless refused, with its secrets where they were read. */
async function wantVersion(
  parts: Parts,
  fv: FunctionVersion & { container: ContainerSpec },
  secrets: VersionSecrets,
  wanted: Set<string>,
): Promise<void> {
  const { table, opener, replacement, refusals } = parts;
  if (refusals.refuses(fv)) return;
  const running = table.get(fv.versionId);
  if (!refusals.readable(fv, secrets, running !== undefined)) {
    if (running) wanted.add(fv.versionId);
    return;
  }
  wanted.add(fv.versionId);
  if (running && running.secretsDigest !== secrets.digest) await updateSecrets(parts, fv, running, secrets);
  else await replacement.cancel(fv.versionId);
  if (!table.has(fv.versionId)) await table.add(fv.versionId, await opener.open(fv, secrets));
}

/** A running server's secrets changed. */
async function updateSecrets(
  parts: Parts,
  fv: FunctionVersion & { container: ContainerSpec },
  running: ServerEntry,
  secrets: ReadSecrets,
): Promise<void> {
  // A process's environment is fixed when it starts: a server with the new set replaces it.
  if (running.process) await parts.replacement.replace(fv, running, secrets);
  else {
    await parts.sidecarSecrets.handOver(fv, secrets);
    running.secretsDigest = secrets.digest;
  }
}

/** Stops the servers of versions no longer wanted. */
async function stopUnwanted(parts: Parts, wanted: ReadonlySet<string>): Promise<void> {
  for (const [versionId, entry] of parts.table.entries()) {
    if (wanted.has(versionId)) continue;
    parts.table.delete(versionId);
    await stopEntry(entry);
    await parts.sidecarSecrets.remove();
  }
}
