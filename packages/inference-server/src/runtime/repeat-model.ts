import { setTimeout as sleep } from 'node:timers/promises';
import { AppError, type Tensor } from '@nvcf/protocol';
import type { BuiltInModelEntry } from './identity-model.ts';
import type { LoadedModel, ModelHandle } from './onnx-runner.ts';
import { validateRequest } from './validate-request.ts';

/**
 * The built-in repeat backend (as Triton's repeat backend, a decoupled model): for each element e of IN, after
 * DELAY[e] milliseconds, one response with OUT = [IN[e]] and IDX = [e]; then the request is complete (Triton's
 * flags-only final). WAIT (Triton: how long an execution holds its instance) is checked and otherwise ignored.
 *
 * @throws AppError INVALID_ARGUMENT at load unless the config has inputs IN (INT32), DELAY (UINT32), WAIT (UINT32)
 *   and outputs OUT (INT32), IDX (UINT32), as the repeat backend requires.
 */
export function startRepeatModel(entry: BuiltInModelEntry): ModelHandle {
  const fail = (why: string): never => {
    throw new AppError('INVALID_ARGUMENT', `failed to load '${entry.name}' version ${entry.version}: ${why}`);
  };
  const io = (list: BuiltInModelEntry['inputs']) => list.map((t) => `${t.name}:${t.datatype}`).join(',');
  if (io(entry.inputs) !== 'IN:INT32,DELAY:UINT32,WAIT:UINT32' || io(entry.outputs) !== 'OUT:INT32,IDX:UINT32') {
    fail(
      'the repeat backend takes inputs IN (INT32), DELAY (UINT32), WAIT (UINT32) and outputs OUT (INT32), IDX (UINT32)',
    );
  }
  const signature = { inputs: entry.inputs, outputs: entry.outputs, unsupported: [] };
  let released = false;
  const refuseReleased = () => {
    if (released) throw new AppError('UNAVAILABLE', `model '${entry.name}' version ${entry.version} was unloaded`);
  };
  const model: LoadedModel = {
    name: entry.name,
    version: entry.version,
    provider: 'repeat',
    inputs: entry.inputs,
    outputs: entry.outputs,
    unsupported: [],
    instances: 1,
    async run() {
      throw new AppError(
        'UNIMPLEMENTED',
        `model '${entry.name}' is decoupled: it answers a request with a stream of responses`,
      );
    },
    async runDecoupled(inputs, emit, signal) {
      refuseReleased();
      validateRequest(entry.name, signature, inputs);
      const byName = (name: string) => inputs.find((t) => t.name === name) as Tensor;
      const values = byName('IN');
      const delays = byName('DELAY');
      if (byName('WAIT').data.length !== 1) throw new AppError('INVALID_ARGUMENT', 'unexpected size for WAIT input');
      if (values.shape.join(',') !== delays.shape.join(',')) {
        throw new AppError(
          'INVALID_ARGUMENT',
          `expected IN and DELAY shape to match, got [${values.shape.join(',')}] and [${delays.shape.join(',')}]`,
        );
      }
      const data = values.data as Int32Array;
      const delay = delays.data as Uint32Array;
      for (let e = 0; e < data.length; e++) {
        if ((delay[e] ?? 0) > 0) await sleep(delay[e], undefined, signal ? { signal } : {});
        if (signal?.aborted) throw new AppError('CANCELLED', 'request cancelled');
        refuseReleased();
        emit([
          { name: 'OUT', datatype: 'INT32', shape: [1], data: Int32Array.of(data[e] ?? 0) },
          { name: 'IDX', datatype: 'UINT32', shape: [1], data: Uint32Array.of(e) },
        ]);
      }
    },
  };
  return {
    model,
    async scale() {},
    async release() {
      released = true;
    },
  };
}
