/**
 * Test-only preload (`node --import run-gate.ts`), never loaded by the product: when
 * `NVCF_TEST_RUN_GATE` names a directory, every ONNX Runtime run of a session with an input named
 * `HOLD` (the `held` test model) writes `entered-<pid>-<n>` there and waits until a file `open`
 * exists. Tests hold a job in flight with it (then SIGKILL or SIGTERM its worker) instead of relying on
 * a model that is "probably slow enough".
 *
 * The wait blocks its thread, as onnxruntime-node's native run does for as long as inference takes: a
 * held run shows what a long inference does to the process around it. Worker threads inherit the
 * preload, so it gates runs wherever the executor puts them.
 */
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { threadId } from 'node:worker_threads';
import { InferenceSession } from 'onnxruntime-node';

const dir = process.env.NVCF_TEST_RUN_GATE;
if (dir) {
  // The factory's type has no prototype; the implementation class behind it does.
  const proto: { run(this: { inputNames: readonly string[] }, ...args: unknown[]): Promise<unknown> } = Reflect.get(
    InferenceSession,
    'prototype',
  );
  const run = proto.run;
  let entered = 0;
  const sleeper = new Int32Array(new SharedArrayBuffer(4));
  proto.run = function gatedRun(...args) {
    if (this.inputNames.includes('HOLD')) {
      writeFileSync(join(dir, `entered-${process.pid}-${threadId}-${++entered}`), '');
      while (!existsSync(join(dir, 'open'))) Atomics.wait(sleeper, 0, 0, 10);
    }
    return run.apply(this, args);
  };
}
