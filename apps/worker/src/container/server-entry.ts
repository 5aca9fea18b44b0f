import { rm } from 'node:fs/promises';
import type { ContainerSpec } from '@nvcf/control-store';
import type { ServerProcess } from './server-process.ts';

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

/** One server of a version, with what its owner needs to check, replace and stop it. */
export interface ServerEntry extends ServerInstance {
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
}

export function newEntry(spec: ContainerSpec, base: URL, healthUrl: URL, secretsDigest: string): ServerEntry {
  const entry: ServerEntry = {
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

export async function stopEntry(entry: ServerEntry): Promise<void> {
  await entry.process?.stop();
  if (entry.home) await rm(entry.home, { recursive: true, force: true });
}
