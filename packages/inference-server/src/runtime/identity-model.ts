import { AppError, type Tensor, type TensorSpec } from '@nvcf/protocol';
import type { LoadedModel, ModelHandle } from './onnx-runner.ts';
import { validateRequest } from './validate-request.ts';

/** What a built-in backend (identity, repeat, dyna_sequence) needs of a model version: its tensors, from the config (there is no model file). */
export interface BuiltInModelEntry {
  name: string;
  version: string;
  /** Shapes with a -1 batch dimension first when the config batches, as a session would report them. */
  inputs: TensorSpec[];
  outputs: TensorSpec[];
}

/**
 * The built-in identity backend (as Triton's identity backend): OUTPUT<i> is INPUT<i>, element for element and
 * byte for byte, so BYTES keep what ONNX Runtime string tensors cannot hold (NULs, bytes that are not UTF-8).
 * It runs on the event loop: there is nothing to compute, only a hand-over of the request's own storage.
 *
 * @throws AppError INVALID_ARGUMENT at load for an input or output not named `INPUT<i>` / `OUTPUT<i>`, or an
 *   output without its input, or one of another datatype.
 */
export function startIdentityModel(entry: BuiltInModelEntry): ModelHandle {
  const fail = (why: string): never => {
    throw new AppError('INVALID_ARGUMENT', `failed to load '${entry.name}' version ${entry.version}: ${why}`);
  };
  const sourceOf = new Map<string, string>();
  for (const output of entry.outputs) {
    const index = /^OUTPUT(\d+)$/.exec(output.name)?.[1];
    if (index === undefined) fail(`the identity backend's outputs are named OUTPUT<i>, not '${output.name}'`);
    const input = entry.inputs.find((i) => i.name === `INPUT${index}`);
    if (!input) fail(`output '${output.name}' has no input 'INPUT${index}' to copy`);
    else if (input.datatype !== output.datatype) {
      fail(`output '${output.name}' is ${output.datatype} but 'INPUT${index}' is ${input.datatype}`);
    }
    sourceOf.set(output.name, `INPUT${index}`);
  }
  const signature = { inputs: entry.inputs, outputs: entry.outputs, unsupported: [] };
  let released = false;
  const model: LoadedModel = {
    name: entry.name,
    version: entry.version,
    provider: 'identity',
    inputs: entry.inputs,
    outputs: entry.outputs,
    unsupported: [],
    instances: 1,
    async run(inputs: Tensor[], outputNames?: string[]) {
      if (released) throw new AppError('UNAVAILABLE', `model '${entry.name}' version ${entry.version} was unloaded`);
      // The checks and texts a session's requests get.
      const names = validateRequest(entry.name, signature, inputs, outputNames);
      return names.map((name) => {
        const input = inputs.find((t) => t.name === sourceOf.get(name));
        if (!input) throw new AppError('INTERNAL', `identity model '${entry.name}': no input for output '${name}'`);
        const output: Tensor = { name, datatype: input.datatype, shape: [...input.shape], data: input.data };
        return output;
      });
    },
  };
  return {
    model,
    // One "instance" is enough: a run is a hand-over of references.
    async scale() {},
    async release() {
      released = true;
    },
  };
}
