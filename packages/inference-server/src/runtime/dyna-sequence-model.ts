import { AppError, type Tensor } from '@nvcf/protocol';
import type { BuiltInModelEntry } from './identity-model.ts';
import type { LoadedModel, ModelHandle } from './onnx-runner.ts';
import { validateRequest } from './validate-request.ts';

const utf8 = new TextDecoder();

/**
 * The built-in dyna_sequence backend (as Triton's test backend behind `simple_string_dyna_sequence`): a running sum
 * per correlation id. On START the sum becomes the request's INPUT (START itself is not added), afterwards each
 * request adds its INPUT; on END the id, read as an integer, is added, the sum answered, and the id forgotten. The
 * sequence batcher feeds START, END, READY and CORRID; OUTPUT is the sum, or 0 for a request that is not READY.
 *
 * @throws AppError INVALID_ARGUMENT at load unless the config has INPUT (INT32) and OUTPUT (INT32).
 */
export function startDynaSequenceModel(entry: BuiltInModelEntry): ModelHandle {
  const names = (list: BuiltInModelEntry['inputs']) => list.map((t) => `${t.name}:${t.datatype}`).join(',');
  if (!names(entry.inputs).includes('INPUT:INT32') || names(entry.outputs) !== 'OUTPUT:INT32') {
    throw new AppError(
      'INVALID_ARGUMENT',
      `failed to load '${entry.name}' version ${entry.version}: the dyna_sequence backend takes INPUT (INT32) and answers OUTPUT (INT32)`,
    );
  }
  const sums = new Map<string, number>();
  let released = false;
  const scalar = (inputs: Tensor[], name: string): number => Number(inputs.find((t) => t.name === name)?.data[0] ?? 0);
  const model: LoadedModel = {
    name: entry.name,
    version: entry.version,
    provider: 'dyna_sequence',
    // The control inputs come from the sequence batcher, which the scheduler checks; the request's own is INPUT.
    inputs: entry.inputs,
    outputs: entry.outputs,
    unsupported: [],
    instances: 1,
    async run(inputs, outputNames) {
      if (released) throw new AppError('UNAVAILABLE', `model '${entry.name}' version ${entry.version} was unloaded`);
      const own = inputs.filter((t) => entry.inputs.some((i) => i.name === t.name));
      validateRequest(entry.name, { inputs: entry.inputs, outputs: entry.outputs, unsupported: [] }, own, outputNames);
      const corrid = inputs.find((t) => t.name === 'CORRID');
      if (!corrid) throw new AppError('INVALID_ARGUMENT', `model '${entry.name}' needs a CORRID control input`);
      const id = corrid.datatype === 'BYTES' ? utf8.decode((corrid.data as Uint8Array[])[0]) : String(corrid.data[0]);
      const values = (inputs.find((t) => t.name === 'INPUT')?.data ?? new Int32Array(0)) as Int32Array;
      const input = values.reduce((a, b) => a + b, 0);
      let sum = scalar(inputs, 'START') !== 0 ? input : (sums.get(id) ?? 0) + input;
      if (scalar(inputs, 'END') !== 0) {
        const asInteger = Number.parseInt(id, 10);
        if (Number.isNaN(asInteger)) {
          throw new AppError(
            'INVALID_ARGUMENT',
            'dyna sequence backend expects correlation ID to be decodable into an integer',
          );
        }
        sum += asInteger;
        sums.delete(id);
      } else sums.set(id, sum);
      const ready = scalar(inputs, 'READY') !== 0;
      const batched = (inputs.find((t) => t.name === 'INPUT')?.shape.length ?? 1) > 1;
      return [
        { name: 'OUTPUT', datatype: 'INT32', shape: batched ? [1, 1] : [1], data: Int32Array.of(ready ? sum : 0) },
      ];
    },
  };
  return {
    model,
    async scale() {},
    async release() {
      released = true;
      sums.clear();
    },
  };
}
