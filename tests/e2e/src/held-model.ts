import { mkdir, mkdtemp, readdir, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { buildModel, OnnxElemType, writeModelVersion } from '@nvcf/models';

/** The input name that run-gate.ts holds on. */
export const HOLD_INPUT = 'HOLD';
export const HELD_WIDTH = 4;

/**
 * `held`: OUTPUT0 = HOLD (Identity). Its only use is the input name: in a worker process started with
 * the run gate (`runGate().execArgv`), every run of it waits until the test opens the gate, so a job
 * stays in flight for exactly as long as the test needs, whatever the machine's speed.
 */
export async function writeHeldModel(repositoryDir: string): Promise<void> {
  const model = buildModel({
    graphName: 'held',
    inputs: [{ name: HOLD_INPUT, elemType: OnnxElemType.FLOAT, shape: ['batch', HELD_WIDTH] }],
    outputs: [{ name: 'OUTPUT0', elemType: OnnxElemType.FLOAT, shape: ['batch', HELD_WIDTH] }],
    nodes: [{ opType: 'Identity', inputs: [HOLD_INPUT], outputs: ['OUTPUT0'] }],
  });
  await writeModelVersion(repositoryDir, 'held', model);
}

export function heldRequest(values: number[]): object {
  return { inputs: [{ name: HOLD_INPUT, datatype: 'FP32', shape: [1, HELD_WIDTH], data: values }] };
}

export interface RunGate {
  /** Environment and node flags for a worker process whose runs of `held` wait at this gate. */
  env: Record<string, string>;
  execArgv: string[];
  /** Resolves once `count` runs of `held` (default 1) are waiting at or went through the gate. */
  entered(count?: number): Promise<void>;
  /** How many runs of `held` have reached the gate so far, in every process and thread. */
  enteredCount(): Promise<number>;
  /** Lets every waiting and later run through. */
  open(): Promise<void>;
}

export async function createRunGate(): Promise<RunGate> {
  const dir = await mkdtemp(join(tmpdir(), 'nvcf-gate-'));
  await mkdir(dir, { recursive: true });
  const enteredCount = async () => (await readdir(dir)).filter((f) => f.startsWith('entered-')).length;
  return {
    env: { NVCF_TEST_RUN_GATE: dir },
    execArgv: ['--import', resolve(import.meta.dirname, 'run-gate.ts')],
    async entered(count = 1) {
      const deadline = Date.now() + 30_000;
      while (Date.now() < deadline) {
        if ((await enteredCount()) >= count) return;
        await new Promise((r) => setTimeout(r, 10));
      }
      throw new Error(`${await enteredCount()} of ${count} runs reached the gate`);
    },
    enteredCount,
    open: () => writeFile(join(dir, 'open'), ''),
  };
}
