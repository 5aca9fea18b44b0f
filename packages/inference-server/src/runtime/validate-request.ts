import { AppError, FIXED_ARRAY_CLASS, type Tensor, type TensorSpec } from '@nvcf/protocol';
import type { ModelSignature } from './model-signature.ts';

const fmtShape = (shape: readonly number[]) => `[${shape.join(',')}]`;
const fmtNames = (names: readonly string[]) => `[${names.map((n) => `'${n}'`).join(', ')}]`;
const invalid = (message: string) => new AppError('INVALID_ARGUMENT', message);

function unsupported(model: string, kind: string, name: string, ortType: string): AppError {
  return new AppError(
    'UNIMPLEMENTED',
    `inference ${kind} '${name}' of model '${model}' has ONNX Runtime type '${ortType}', which this server cannot carry`,
  );
}

function shapeMatches(spec: readonly number[], shape: readonly number[]): boolean {
  return spec.length === shape.length && spec.every((d, i) => d === -1 || d === shape[i]);
}

function checkData(model: string, spec: TensorSpec, tensor: Tensor): void {
  if (tensor.datatype === 'BYTES') {
    if (!Array.isArray(tensor.data))
      throw invalid(`inference input '${tensor.name}' of datatype BYTES must hold byte strings`);
  } else {
    const expected = FIXED_ARRAY_CLASS[tensor.datatype];
    if (!(tensor.data instanceof expected)) {
      throw invalid(
        `inference input '${tensor.name}' of datatype ${tensor.datatype} must hold a ${expected.name}, got ${tensor.data.constructor.name}`,
      );
    }
  }
  const count = tensor.shape.reduce((a, b) => a * b, 1);
  if (tensor.data.length !== count) {
    throw invalid(
      `unexpected element count for input '${spec.name}' for model '${model}'. ` +
        `Shape ${fmtShape(tensor.shape)} needs ${count}, got ${tensor.data.length}`,
    );
  }
}

function checkInput(model: string, spec: TensorSpec, tensor: Tensor): void {
  if (tensor.datatype !== spec.datatype) {
    throw invalid(
      `inference input '${tensor.name}' data-type is '${tensor.datatype}', but model '${model}' expects '${spec.datatype}'`,
    );
  }
  const wellFormed = tensor.shape.every((d) => Number.isSafeInteger(d) && d >= 0);
  if (!wellFormed || !shapeMatches(spec.shape, tensor.shape)) {
    throw invalid(
      `unexpected shape for input '${tensor.name}' for model '${model}'. ` +
        `Expected ${fmtShape(spec.shape)}, got ${fmtShape(tensor.shape)}`,
    );
  }
  checkData(model, spec, tensor);
}

function resolveOutputs(model: string, signature: ModelSignature, requested?: readonly string[]): string[] {
  // No list (or an empty one, as KServe clients send) means every output we can return.
  if (!requested || requested.length === 0) return signature.outputs.map((o) => o.name);
  const seen = new Set<string>();
  for (const name of requested) {
    const bad = signature.unsupported.find((u) => u.kind === 'output' && u.name === name);
    if (bad) throw unsupported(model, 'output', name, bad.ortType);
    if (!signature.outputs.some((o) => o.name === name)) {
      throw invalid(`unexpected inference output '${name}' for model '${model}'`);
    }
    if (seen.has(name)) throw invalid(`inference output '${name}' is requested more than once for model '${model}'`);
    seen.add(name);
  }
  return [...requested];
}

/**
 * Checks a request against the model before anything reaches ONNX Runtime, whose own errors are terse and
 * sometimes fatal (a short buffer is read past its end), and answers with Triton's wording so clients that match on
 * messages keep working. Returns the output names to fetch, in response order.
 *
 * @example
 * validateRequest('simple', signature, [input0], ['OUTPUT1']); // ['OUTPUT1']
 */
export function validateRequest(
  model: string,
  signature: ModelSignature,
  inputs: readonly Tensor[],
  outputNames?: readonly string[],
): string[] {
  // ORT needs every input fed, so one we cannot carry makes the whole model unusable: say so before anything else.
  const badInput = signature.unsupported.find((u) => u.kind === 'input');
  if (badInput) throw unsupported(model, 'input', badInput.name, badInput.ortType);

  const given = new Set<string>();
  for (const tensor of inputs) {
    const spec = signature.inputs.find((s) => s.name === tensor.name);
    if (!spec) throw invalid(`unexpected inference input '${tensor.name}' for model '${model}'`);
    if (given.has(tensor.name))
      throw invalid(`inference input '${tensor.name}' is given more than once for model '${model}'`);
    given.add(tensor.name);
    checkInput(model, spec, tensor);
  }
  const missing = signature.inputs.filter((s) => !given.has(s.name)).map((s) => s.name);
  if (missing.length > 0) {
    throw invalid(
      `expected ${signature.inputs.length} inputs but got ${given.size} inputs for model '${model}'. ` +
        `Got input(s) ${fmtNames([...given])}, but missing required input(s) ${fmtNames(missing)}. ` +
        'Please provide all required input(s).',
    );
  }
  return resolveOutputs(model, signature, outputNames);
}
