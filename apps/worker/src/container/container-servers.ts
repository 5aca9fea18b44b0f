import { chown, mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { ContainerSpec, FunctionVersion, SecretValues } from '@nvcf/control-store';
import { parseServerPath } from '@nvcf/protocol';
import type { Logger } from '@nvcf/service-kit';
import { freePort } from '@nvcf/service-kit';
import { mayRunProcess, type ProcessTrust } from './process-trust.ts';
import { deploymentMetadata } from './request-headers.ts';
import { removeSecretsFile, writeSecretsFile } from './secrets-file.ts';
import { checkHealth } from './server-health.ts';
import { type ServerProcess, startServerProcess } from './server-process.ts';
import type { ServerSandbox } from './server-sandbox.ts';
import { serverUrl } from './server-url.ts';
import { NO_SECRETS, type ReadSecrets, type VersionSecrets } from './version-secrets.ts';

/** A container version's inference server as this worker reaches it. */
export interface ServerInstance {
  /** `http://host:port` of the server. */
  readonly base: URL;
  /** Its last health check passed. */
  readonly healthy: boolean;
  /**
   * A request is on its way to this server: a server being replaced is stopped only once every hold is
   * released (the returned function), so that an answer it is giving is not cut off.
   */
  hold(): () => void;
}

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

interface Entry {
  spec: ContainerSpec;
  base: URL;
  healthUrl: URL;
  healthy: boolean;
  process?: ServerProcess;
  /** Which secrets the server has (`VersionSecrets.digest`). */
  secretsDigest: string;
  /** Process mode: the server's own writable directory (HOME, TMPDIR), removed when it stops. */
  home?: string;
  /** Requests on their way to it now (`hold`). */
  inFlight: number;
  /** Called when `inFlight` drops to 0 (a retiring server waits for it). */
  onIdle?: () => void;
  hold(): () => void;
}

/** A replacement server is checked this often at first, then less often up to the health interval. */
const REPLACEMENT_FIRST_CHECK_MS = 50;

function newEntry(spec: ContainerSpec, base: URL, healthUrl: URL, secretsDigest: string): Entry {
  const entry: Entry = {
    spec,
    base,
    healthUrl,
    healthy: false,
    secretsDigest,
    inFlight: 0,
    hold() {
      entry.inFlight++;
      let released = false;
      return () => {
        if (released) return;
        released = true;
        entry.inFlight--;
        if (entry.inFlight === 0) entry.onIdle?.();
      };
    },
  };
  return entry;
}

/** A path the version was checked for (refusalOf) on its server. */
function serverUrlOf(base: URL, path: string): URL {
  const url = serverUrl(base, path);
  if (!url) throw new Error(`'${path}' is not a path of the function's server`);
  return url;
}

/**
 * The inference servers of the container versions a worker serves, and whether each answers its health check.
 * Sidecar mode (NVCF's own architecture: the server is a container beside the worker, at `WORKER_CONTAINER_URL`)
 * or process mode (the worker runs `containerArgs` itself on a free port). One timer checks every server.
 */
export function createContainerServers(opts: ContainerServersOptions): ContainerServers {
  const entries = new Map<string, Entry>();
  /** Process servers starting with changed secrets, by version: each takes its version over once healthy. */
  const replacing = new Map<string, Entry>();
  /** Replaced servers finishing the requests they hold before they stop. */
  const retirements = new Set<Promise<void>>();
  const retiring = new Set<Entry>();
  let closing = false;
  /** Servers this worker started (each one's home is its own). */
  let starts = 0;
  const mode = opts.url ? 'sidecar' : opts.processes ? 'process' : 'none';
  /** Why a listed version is not served here (no command, not trusted, a path that is not a path), as last logged. */
  const refused = new Map<string, string>();
  const sandbox: ServerSandbox = opts.sandbox ?? { kind: 'none', writable: [] };
  /** Why a version's secrets could not be read, as last logged (logged again only when the reason changes). */
  const unreadable = new Map<string, string>();
  const secretsDir = mode === 'sidecar' ? (opts.secretsDir ?? '') : '';

  const check = async (entry: Entry) => {
    const ok = await checkHealth(entry.healthUrl, entry.spec.health.expectedStatusCode, entry.spec.health.timeoutMs);
    if (ok) entry.process?.healthy();
    if (ok === entry.healthy) return false;
    entry.healthy = ok;
    opts.log.info(
      { server: entry.base.href, healthy: ok },
      ok ? 'inference server healthy' : 'inference server unhealthy',
    );
    return true;
  };
  let checking: Promise<void> | undefined;
  const checkAll = () => {
    checking ??= Promise.all([...entries.values()].map(check))
      .then((changes) => {
        if (changes.some(Boolean)) opts.onChange();
      })
      .finally(() => {
        checking = undefined;
      });
    return checking;
  };
  // A worker that serves no container functions checks nothing.
  const timer = mode === 'none' ? undefined : setInterval(() => void checkAll(), opts.intervalMs);
  timer?.unref();

  /** A sidecar's secrets: its `secrets.json`, or a warning that it gets none. */
  async function handOver(fv: FunctionVersion, secrets: ReadSecrets): Promise<void> {
    if (secretsDir) await writeSecretsFile(secretsDir, secrets.values);
    else if (secrets.digest !== NO_SECRETS.digest) {
      opts.log.warn(
        { versionId: fv.versionId },
        'the function has secrets, but this sidecar worker has no WORKER_SECRETS_DIR to hand them over in',
      );
    }
  }

  /** A process server's home: its own, owned by its user, inside the one directory the sandbox leaves writable. */
  async function serverHome(versionId: string): Promise<string> {
    starts++;
    const home = join(opts.workDir, `.server-${versionId}-${starts}`);
    await mkdir(home, { recursive: true, mode: 0o700 });
    if (sandbox.user) await chown(home, sandbox.user.uid, sandbox.user.gid);
    return home;
  }

  async function stopEntry(entry: Entry): Promise<void> {
    await entry.process?.stop();
    if (entry.home) await rm(entry.home, { recursive: true, force: true });
  }

  /** Why this worker does not serve a listed version, or undefined when it may. */
  function refusalOf(fv: FunctionVersion & { container: ContainerSpec }): string | undefined {
    // Versions stored before the gateway refused anything but a path are still read: never resolved elsewhere.
    if (parseServerPath(fv.inferenceUrl) === undefined || parseServerPath(fv.container.health.uri) === undefined) {
      return 'its inferenceUrl or health URI is not a path of its server; not serving it';
    }
    if (mode !== 'process') return undefined;
    if (!fv.container.args) return 'container function has no containerArgs to run; not serving it';
    if (!mayRunProcess(opts.trust, fv)) {
      return "process mode runs only the versions this worker's operator trusts (WORKER_FUNCTION_VERSIONS, else the worker's own NVCF_NCA_ID); not running this function's containerArgs on this host";
    }
    return undefined;
  }

  async function open(fv: FunctionVersion & { container: ContainerSpec }, secrets: ReadSecrets): Promise<Entry> {
    const spec = fv.container;
    const secretsDigest = secrets.digest;
    if (mode === 'sidecar') {
      const base = new URL(opts.url);
      if (!base.port && spec.inferencePort) base.port = String(spec.inferencePort);
      const healthUrl = serverUrlOf(base, spec.health.uri);
      if (spec.health.port) healthUrl.port = String(spec.health.port);
      await handOver(fv, secrets);
      return newEntry(spec, new URL(base.origin), healthUrl, secretsDigest);
    }
    const port = await freePort();
    const base = new URL(`http://127.0.0.1:${port}`);
    const log = opts.log.child({ versionId: fv.versionId, server: 'process' });
    const healthUrl = serverUrlOf(base, spec.health.uri);
    const entry = newEntry(spec, base, healthUrl, secretsDigest);
    const home = await serverHome(fv.versionId);
    entry.home = home;
    entry.process = startServerProcess({
      command: spec.args ?? '',
      env: processEnv(fv, port, secrets.values, home),
      sandbox,
      log,
      onExit: () => {
        if (!entry.healthy) return;
        entry.healthy = false;
        opts.onChange();
      },
    });
    log.info({ pid: entry.process.pid, port }, 'inference server process started');
    return entry;
  }

  /**
   * A running process server's secrets changed: a new server starts with them beside it and takes the version
   * over once healthy (`takeOver`), so requests meanwhile are still answered. One that serves nothing now is
   * simply replaced.
   */
  async function replace(
    fv: FunctionVersion & { container: ContainerSpec },
    running: Entry,
    secrets: ReadSecrets,
  ): Promise<void> {
    if (replacing.get(fv.versionId)?.secretsDigest === secrets.digest) return;
    await cancelReplacement(fv.versionId);
    if (!running.healthy) {
      opts.log.info({ versionId: fv.versionId }, "the function's secrets changed; restarting its server");
      entries.delete(fv.versionId);
      await stopEntry(running);
      const entry = await open(fv, secrets);
      entries.set(fv.versionId, entry);
      await check(entry);
      return;
    }
    opts.log.info(
      { versionId: fv.versionId },
      "the function's secrets changed; starting a server with them beside the running one",
    );
    const next = await open(fv, secrets);
    replacing.set(fv.versionId, next);
    takeOver(fv.versionId, next).catch((err: unknown) =>
      opts.log.error({ err, versionId: fv.versionId }, 'replacing the server with the new secrets failed'),
    );
  }

  /** Checks a replacement until it is healthy, then routes its version to it and retires the server it replaces. */
  async function takeOver(versionId: string, next: Entry): Promise<void> {
    for (let delay = REPLACEMENT_FIRST_CHECK_MS; replacing.get(versionId) === next; ) {
      await check(next);
      if (next.healthy) break;
      await sleep(delay);
      if (delay < opts.intervalMs && delay * 2 >= opts.intervalMs) {
        opts.log.warn(
          { versionId, server: next.base.href },
          'the server with the new secrets is not healthy yet; the running one keeps serving until it is',
        );
      }
      delay = Math.min(delay * 2, opts.intervalMs);
    }
    // Cancelled meanwhile: a newer set of secrets, the version unlisted, or the worker closing.
    if (replacing.get(versionId) !== next) return;
    replacing.delete(versionId);
    const old = entries.get(versionId);
    entries.set(versionId, next);
    opts.log.info({ versionId, server: next.base.href }, 'the server with the new secrets took over');
    if (old) retire(old);
    // The one it replaced had stopped answering meanwhile: the version is served again.
    if (!old?.healthy) opts.onChange();
  }

  async function cancelReplacement(versionId: string): Promise<void> {
    const pending = replacing.get(versionId);
    if (!pending) return;
    replacing.delete(versionId);
    await stopEntry(pending);
  }

  /** Stops a replaced server once the requests it holds are answered (or at once when the worker closes). */
  function retire(entry: Entry): void {
    retiring.add(entry);
    const done = (async () => {
      if (entry.inFlight > 0 && !closing) {
        await new Promise<void>((resolve) => {
          entry.onIdle = resolve;
        });
      }
      retiring.delete(entry);
      await stopEntry(entry);
    })();
    retirements.add(done);
    void done.finally(() => retirements.delete(done));
  }

  return {
    mode,
    async want(versions, secretsOf = new Map()) {
      if (mode === 'none') return;
      const wanted = new Set<string>();
      for (const fv of versions) {
        const refusal = refusalOf(fv);
        if (refusal) {
          if (refused.get(fv.versionId) !== refusal) {
            refused.set(fv.versionId, refusal);
            opts.log.warn({ versionId: fv.versionId, functionId: fv.id, ncaId: fv.ncaId }, refusal);
          }
          continue;
        }
        refused.delete(fv.versionId);
        const secrets = secretsOf.get(fv.versionId) ?? NO_SECRETS;
        const running = entries.get(fv.versionId);
        if (!secrets.ok) {
          if (unreadable.get(fv.versionId) !== secrets.reason) {
            unreadable.set(fv.versionId, secrets.reason);
            opts.log.error(
              { versionId: fv.versionId, reason: secrets.reason },
              running
                ? "cannot read the function's secrets; its server keeps the ones it has"
                : "cannot read the function's secrets (NVCF_SECRETS_KEY); not serving it",
            );
          }
          if (running) wanted.add(fv.versionId);
          continue;
        }
        unreadable.delete(fv.versionId);
        wanted.add(fv.versionId);
        if (running && running.secretsDigest !== secrets.digest) {
          // A process's environment is fixed when it starts: a server with the new set replaces it.
          if (running.process) await replace(fv, running, secrets);
          else {
            await handOver(fv, secrets);
            running.secretsDigest = secrets.digest;
          }
        } else await cancelReplacement(fv.versionId);
        if (!entries.has(fv.versionId)) {
          const entry = await open(fv, secrets);
          entries.set(fv.versionId, entry);
          await check(entry);
        }
      }
      for (const versionId of replacing.keys()) if (!wanted.has(versionId)) await cancelReplacement(versionId);
      for (const [versionId, entry] of entries) {
        if (wanted.has(versionId)) continue;
        entries.delete(versionId);
        await stopEntry(entry);
        if (secretsDir) await removeSecretsFile(secretsDir);
      }
      const listed = new Set(versions.map((fv) => fv.versionId));
      for (const versionId of unreadable.keys()) if (!listed.has(versionId)) unreadable.delete(versionId);
      for (const versionId of refused.keys()) if (!listed.has(versionId)) refused.delete(versionId);
    },
    instance: (versionId) => entries.get(versionId),
    checkAll,
    async close() {
      closing = true;
      clearInterval(timer);
      await checking;
      for (const entry of retiring) entry.onIdle?.();
      const stopping = [...entries.values(), ...replacing.values()];
      entries.clear();
      replacing.clear();
      await Promise.all([...stopping.map(stopEntry), ...retirements]);
    },
  };
}

/**
 * A process's environment: `containerEnvironment`, the function's secrets (over an entry of the same name), NVCF's
 * deployment variables (NVCF docs: container functions) and the port to listen on (`PORT`, `NVCF_INFERENCE_PORT`),
 * with only `PATH` from the worker's own; `HOME` and `TMPDIR` are the server's own directory unless the function sets them.
 */
function processEnv(
  fv: FunctionVersion & { container: ContainerSpec },
  port: number,
  secrets: SecretValues,
  home: string,
) {
  const env: Record<string, string> = { HOME: home, TMPDIR: home };
  if (process.env.PATH !== undefined) env.PATH = process.env.PATH;
  for (const { key, value } of fv.container.environment) env[key] = value;
  for (const [name, value] of Object.entries(secrets)) env[name] = value;
  const { backend, instanceType } = deploymentMetadata(fv);
  return {
    ...env,
    ...(instanceType ? { NVCF_INSTANCETYPE: instanceType } : {}),
    NVCF_FUNCTION_ID: fv.id,
    NVCF_FUNCTION_VERSION_ID: fv.versionId,
    NVCF_FUNCTION_NAME: fv.name,
    // The function's own account (a shared function's owner).
    NVCF_NCA_ID: fv.ncaId,
    NVCF_BACKEND: backend ?? 'self-hosted',
    NVCF_ENV: 'self-hosted',
    PORT: String(port),
    NVCF_INFERENCE_PORT: String(port),
  };
}
