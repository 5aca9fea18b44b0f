/**
 * Test-only preload (`node --import run-gate.ts`), never loaded by the product: when
 * `NVCF_TEST_RUN_GATE` names a directory, every ONNX Runtime run of a session with an input named
 * `HOLD` (the `held` test model) writes `entered-<pid>-<n>` there and waits until a file `open`
 * exists. Tests hold a job in flight with it (then SIGKILL or SIGTERM its worker) instead of relying on
 * a model that is "probably slow enough".
 */
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
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
  proto.run = async function gatedRun(...args) {
    if (this.inputNames.includes('HOLD')) {
      writeFileSync(join(dir, `entered-${process.pid}-${++entered}`), '');
      while (!existsSync(join(dir, 'open'))) await new Promise((r) => setTimeout(r, 10));
    }
    return run.apply(this, args);
  };
}
