import type { ContainerSpec, FunctionVersion } from '@nvcf/control-store';
import { parseServerPath } from '@nvcf/protocol';
import type { Logger } from '@nvcf/service-kit';
import { mayRunProcess, type ProcessTrust } from './process-trust.ts';
import type { ReadSecrets, VersionSecrets } from './version-secrets.ts';

/**
 * Why a listed version is not served here, or its secrets not read: each logged once, and again only when the
 * reason changes.
 */
export class VersionRefusals {
  readonly #mode: 'sidecar' | 'process' | 'none';
  readonly #trust: ProcessTrust;
  readonly #log: Logger;
  /** Why a listed version is not served here (no command, not trusted, a path that is not a path), as last logged. */
  readonly #refused = new Map<string, string>();
  /** Why a version's secrets could not be read, as last logged (logged again only when the reason changes). */
  readonly #unreadable = new Map<string, string>();

  constructor(mode: 'sidecar' | 'process' | 'none', trust: ProcessTrust, log: Logger) {
    this.#mode = mode;
    this.#trust = trust;
    this.#log = log;
  }

  /** Whether this worker refuses to serve the version (logged). */
  refuses(fv: FunctionVersion & { container: ContainerSpec }): boolean {
    const refusal = this.#refusalOf(fv);
    if (!refusal) {
      this.#refused.delete(fv.versionId);
      return false;
    }
    if (this.#refused.get(fv.versionId) !== refusal) {
      this.#refused.set(fv.versionId, refusal);
      this.#log.warn({ versionId: fv.versionId, functionId: fv.id, ncaId: fv.ncaId }, refusal);
    }
    return true;
  }

  /** Whether the version's secrets were read (if not, logged: a running server keeps the ones it has). */
  readable(fv: FunctionVersion, secrets: VersionSecrets, running: boolean): secrets is ReadSecrets {
    if (secrets.ok) {
      this.#unreadable.delete(fv.versionId);
      return true;
    }
    if (this.#unreadable.get(fv.versionId) !== secrets.reason) {
      this.#unreadable.set(fv.versionId, secrets.reason);
      this.#log.error(
        { versionId: fv.versionId, reason: secrets.reason },
        running
          ? "cannot read the function's secrets; its server keeps the ones it has"
          : "cannot read the function's secrets (NVCF_SECRETS_KEY); not serving it",
      );
    }
    return false;
  }

  /** Forgets the versions no longer listed (one listed again is logged again). */
  forgetUnlisted(versions: readonly FunctionVersion[]): void {
    const listed = new Set(versions.map((fv) => fv.versionId));
    for (const versionId of this.#unreadable.keys()) if (!listed.has(versionId)) this.#unreadable.delete(versionId);
    for (const versionId of this.#refused.keys()) if (!listed.has(versionId)) this.#refused.delete(versionId);
  }

  /** Why this worker does not serve a listed version, or undefined when it may. */
  #refusalOf(fv: FunctionVersion & { container: ContainerSpec }): string | undefined {
    // Versions stored before the gateway refused anything but a path are still read: never resolved elsewhere.
    if (parseServerPath(fv.inferenceUrl) === undefined || parseServerPath(fv.container.health.uri) === undefined) {
      return 'its inferenceUrl or health URI is not a path of its server; not serving it';
    }
    if (this.#mode !== 'process') return undefined;
    if (!fv.container.args) return 'container function has no containerArgs to run; not serving it';
    if (!mayRunProcess(this.#trust, fv)) {
      return "process mode runs only the versions this worker's operator trusts (WORKER_FUNCTION_VERSIONS, else the worker's own NVCF_NCA_ID); not running this function's containerArgs on this host";
    }
    return undefined;
  }
}
