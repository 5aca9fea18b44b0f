import { chown, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { ContainerSpec, FunctionVersion, SecretValues } from '@nvcf/control-store';
import type { Logger } from '@nvcf/service-kit';
import { freePort } from '@nvcf/service-kit';
import { deploymentMetadata } from './request-headers.ts';
import { newEntry, type ServerEntry } from './server-entry.ts';
import { startServerProcess } from './server-process.ts';
import type { ServerSandbox } from './server-sandbox.ts';
import { serverUrl } from './server-url.ts';
import type { SidecarSecrets } from './sidecar-secrets.ts';
import type { ReadSecrets } from './version-secrets.ts';

export interface ServerOpenerOptions {
  mode: 'sidecar' | 'process' | 'none';
  /** Sidecar mode: the server's address. */
  url: string;
  /** Process mode: where each server's home is made. */
  workDir: string;
  sandbox: ServerSandbox;
  sidecarSecrets: SidecarSecrets;
  log: Logger;
  /** A process server that was healthy exited. */
  onChange(): void;
}

/** Opens a version's server: reaches the sidecar, or starts a process with its own home and environment. */
export class ServerOpener {
  readonly #opts: ServerOpenerOptions;
  /** Servers this worker started (each one's home is its own). */
  #starts = 0;

  constructor(opts: ServerOpenerOptions) {
    this.#opts = opts;
  }

  open(fv: FunctionVersion & { container: ContainerSpec }, secrets: ReadSecrets): Promise<ServerEntry> {
    return this.#opts.mode === 'sidecar' ? this.#sidecar(fv, secrets) : this.#process(fv, secrets);
  }

  async #sidecar(fv: FunctionVersion & { container: ContainerSpec }, secrets: ReadSecrets): Promise<ServerEntry> {
    const spec = fv.container;
    const base = new URL(this.#opts.url);
    if (!base.port && spec.inferencePort) base.port = String(spec.inferencePort);
    const healthUrl = serverUrlOf(base, spec.health.uri);
    if (spec.health.port) healthUrl.port = String(spec.health.port);
    await this.#opts.sidecarSecrets.handOver(fv, secrets);
    return newEntry(spec, new URL(base.origin), healthUrl, secrets.digest);
  }

  async #process(fv: FunctionVersion & { container: ContainerSpec }, secrets: ReadSecrets): Promise<ServerEntry> {
    const spec = fv.container;
    const port = await freePort();
    const base = new URL(`http://127.0.0.1:${port}`);
    const log = this.#opts.log.child({ versionId: fv.versionId, server: 'process' });
    const healthUrl = serverUrlOf(base, spec.health.uri);
    const entry = newEntry(spec, base, healthUrl, secrets.digest);
    const home = await this.#home(fv.versionId);
    entry.home = home;
    entry.process = startServerProcess({
      command: spec.args ?? '',
      env: processEnv(fv, port, secrets.values, home),
      sandbox: this.#opts.sandbox,
      log,
      onExit: () => {
        if (!entry.healthy) return;
        entry.healthy = false;
        this.#opts.onChange();
      },
    });
    log.info({ pid: entry.process.pid, port }, 'inference server process started');
    return entry;
  }

  /** A process server's home: its own, owned by its user, inside the one directory the sandbox leaves writable. */
  async #home(versionId: string): Promise<string> {
    this.#starts++;
    const home = join(this.#opts.workDir, `.server-${versionId}-${this.#starts}`);
    await mkdir(home, { recursive: true, mode: 0o700 });
    const { user } = this.#opts.sandbox;
    if (user) await chown(home, user.uid, user.gid);
    return home;
  }
}

/** A path the version was checked for (version-refusals.ts) on its server. */
function serverUrlOf(base: URL, path: string): URL {
  const url = serverUrl(base, path);
  if (!url) throw new Error(`'${path}' is not a path of the function's server`);
  return url;
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
