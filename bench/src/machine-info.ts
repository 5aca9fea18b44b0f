import { readFile } from 'node:fs/promises';
import os from 'node:os';
import { join } from 'node:path';

const benchDir = join(import.meta.dirname, '..');

async function packageVersion(name: string): Promise<string | undefined> {
  try {
    const pkg = JSON.parse(await readFile(join(benchDir, 'node_modules', name, 'package.json'), 'utf8'));
    return (pkg as { version?: string }).version;
  } catch {
    return undefined;
  }
}

/** What the figures were measured on: they mean little without it. */
export async function machineInfo(redisVersion: string | undefined): Promise<Record<string, unknown>> {
  const cpus = os.cpus();
  return {
    cpuModel: cpus[0]?.model ?? 'unknown',
    cpuCount: cpus.length,
    totalMemoryBytes: os.totalmem(),
    platform: os.platform(),
    release: os.release(),
    arch: os.arch(),
    node: process.version,
    redis: redisVersion,
    bullmq: await packageVersion('bullmq'),
    onnxruntimeNode: await packageVersion('onnxruntime-node'),
  };
}
