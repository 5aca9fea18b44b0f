import type { ContainerSpec, FunctionVersion } from '@nvcf/queue';
import type { Logger } from '@nvcf/service-kit';
import { freePort } from './free-port.ts';
import { deploymentMetadata } from './request-headers.ts';
import { checkHealth } from './server-health.ts';
import { type ServerProcess, startServerProcess } from './server-process.ts';

/** A container version's inference server as this worker reaches it. */
export interface ServerInstance {
  /** `http://host:port` of the server. */
  readonly base: URL;
  /** Its last health check passed. */
  readonly healthy: boolean;
}

export interface ContainerServers {
  /** How this worker runs container functions ('none': it serves none). */
  readonly mode: 'sidecar' | 'process' | 'none';
  /**
   * The container versions this worker should serve now: servers of new ones start (process mode), those of
   * versions no longer listed stop. `instance` then has each, healthy or not.
   */
  want(versions: readonly (FunctionVersion & { container: ContainerSpec })[]): Promise<void>;
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
  /** How often every server's health is checked (the heartbeat's period: ACTIVE follows health). */
  intervalMs: number;
  /** NVCF's deployment metadata handed to a process as environment (`NVCF_*`). */
  ncaId: string;
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
}

/**
 * The inference servers of the container versions a worker serves, and whether each answers its health check.
 * Sidecar mode (NVCF's own architecture: the server is a container beside the worker, at `WORKER_CONTAINER_URL`)
 * or process mode (the worker runs `containerArgs` itself on a free port). One timer checks every server.
 */
export function createContainerServers(opts: ContainerServersOptions): ContainerServers {
  const entries = new Map<string, Entry>();
  const mode = opts.url ? 'sidecar' : opts.processes ? 'process' : 'none';
  /** Versions that process mode cannot run (no command), each logged once. */
  const commandless = new Set<string>();

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

  async function open(fv: FunctionVersion & { container: ContainerSpec }): Promise<Entry> {
    const spec = fv.container;
    if (mode === 'sidecar') {
      const base = new URL(opts.url);
      if (!base.port && spec.inferencePort) base.port = String(spec.inferencePort);
      const healthUrl = new URL(spec.health.uri, base);
      if (spec.health.port) healthUrl.port = String(spec.health.port);
      return { spec, base: new URL(base.origin), healthUrl, healthy: false };
    }
    const port = await freePort();
    const base = new URL(`http://127.0.0.1:${port}`);
    const log = opts.log.child({ versionId: fv.versionId, server: 'process' });
    const entry: Entry = { spec, base, healthUrl: new URL(spec.health.uri, base), healthy: false };
    entry.process = startServerProcess({
      command: spec.args ?? '',
      env: processEnv(fv, port, opts.ncaId),
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

  return {
    mode,
    async want(versions) {
      if (mode === 'none') return;
      const wanted = new Set<string>();
      for (const fv of versions) {
        if (mode === 'process' && !fv.container.args) {
          if (!commandless.has(fv.versionId)) {
            commandless.add(fv.versionId);
            opts.log.warn(
              { versionId: fv.versionId },
              'container function has no containerArgs to run; not serving it',
            );
          }
          continue;
        }
        wanted.add(fv.versionId);
        if (!entries.has(fv.versionId)) {
          const entry = await open(fv);
          entries.set(fv.versionId, entry);
          await check(entry);
        }
      }
      for (const [versionId, entry] of entries) {
        if (wanted.has(versionId)) continue;
        entries.delete(versionId);
        await entry.process?.stop();
      }
    },
    instance: (versionId) => entries.get(versionId),
    checkAll,
    async close() {
      clearInterval(timer);
      await checking;
      await Promise.all([...entries.values()].map((e) => e.process?.stop()));
      entries.clear();
    },
  };
}

/**
 * A process's environment: `containerEnvironment`, NVCF's deployment variables (NVCF docs: container functions)
 * and the port to listen on (`PORT`, `NVCF_INFERENCE_PORT`), with only `PATH` and `HOME` from the worker's own.
 */
function processEnv(fv: FunctionVersion & { container: ContainerSpec }, port: number, ncaId: string) {
  const env: Record<string, string> = {};
  for (const name of ['PATH', 'HOME'] as const) {
    const value = process.env[name];
    if (value !== undefined) env[name] = value;
  }
  for (const { key, value } of fv.container.environment) env[key] = value;
  const { backend, instanceType } = deploymentMetadata(fv);
  return {
    ...env,
    ...(instanceType ? { NVCF_INSTANCETYPE: instanceType } : {}),
    NVCF_FUNCTION_ID: fv.id,
    NVCF_FUNCTION_VERSION_ID: fv.versionId,
    NVCF_FUNCTION_NAME: fv.name,
    NVCF_NCA_ID: ncaId,
    NVCF_BACKEND: backend ?? 'self-hosted',
    NVCF_ENV: 'self-hosted',
    PORT: String(port),
    NVCF_INFERENCE_PORT: String(port),
  };
}
