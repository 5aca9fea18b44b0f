/**
 * Execution providers a deployment may list, in the config's spelling. The value is the name onnxruntime-node
 * expects in `executionProviders`; today they coincide, and this table is the one place to change if they part.
 */
const ORT_PROVIDER_NAME = {
  cpu: 'cpu',
  cuda: 'cuda',
  tensorrt: 'tensorrt',
  webgpu: 'webgpu',
  dml: 'dml',
  coreml: 'coreml',
} as const;

export type ExecutionProvider = keyof typeof ORT_PROVIDER_NAME;
export const EXECUTION_PROVIDERS = Object.keys(ORT_PROVIDER_NAME) as ExecutionProvider[];

function isExecutionProvider(name: string): name is ExecutionProvider {
  return Object.hasOwn(ORT_PROVIDER_NAME, name);
}

/**
 * Checks a configured provider list (order = preference) once, at startup: a typo such as `cdua` would otherwise
 * surface only as a warning per model load and a silent fall back to CPU.
 *
 * @example
 * parseExecutionProviders(['CUDA', 'cpu']); // ['cuda', 'cpu']
 * parseExecutionProviders(['gpu']);         // throws: unknown execution provider 'gpu' (supported: cpu, cuda, ...)
 */
export function parseExecutionProviders(names: readonly string[]): ExecutionProvider[] {
  if (names.length === 0) throw new Error('executionProviders must name at least one provider (e.g. ["cpu"])');
  const parsed: ExecutionProvider[] = [];
  for (const raw of names) {
    const name = raw.trim().toLowerCase();
    if (!isExecutionProvider(name)) {
      throw new Error(`unknown execution provider '${raw}' (supported: ${EXECUTION_PROVIDERS.join(', ')})`);
    }
    if (parsed.includes(name)) throw new Error(`execution provider '${name}' is listed twice`);
    parsed.push(name);
  }
  return parsed;
}

/** The name to hand to `InferenceSession.create({ executionProviders: [...] })`. */
export function ortProviderName(provider: ExecutionProvider): string {
  return ORT_PROVIDER_NAME[provider];
}
