import { buildModel, OnnxElemType } from '@nvcf/models';
import * as ort from 'onnxruntime-node';
import { type ExecutionProvider, ortProviderName } from './execution-providers.ts';

export interface ProviderProbe {
  /** The configured providers this machine can start, in the configured order. */
  usable: ExecutionProvider[];
  /** Why each of the others cannot start. */
  unavailable: Partial<Record<ExecutionProvider, string>>;
}

const probes = new Map<string, Promise<ProviderProbe>>();

/** A one-node model (Identity) to start a session with: cheap, and valid for every provider. */
const PROBE_MODEL = buildModel({
  graphName: 'provider-probe',
  inputs: [{ name: 'x', elemType: OnnxElemType.FLOAT, shape: [1] }],
  outputs: [{ name: 'y', elemType: OnnxElemType.FLOAT, shape: [1] }],
  nodes: [{ opType: 'Identity', inputs: ['x'], outputs: ['y'] }],
});

/**
 * Which of the configured execution providers this machine can start, found once per process (the answer
 * cannot change while it runs). Without it every model load would try an absent GPU provider first and
 * ONNX Runtime would print its red "Failed to load library … providers_shared.so" at each one.
 *
 * ONNX Runtime's process-wide log level is set to fatal before its first session (it is fixed from then
 * on): the probe's expected failures stay quiet, and real ones surface as the errors sessions throw.
 * Model sessions set their own level (warnings) to keep their messages.
 */
export function probeProviders(providers: readonly ExecutionProvider[]): Promise<ProviderProbe> {
  const id = providers.join(',');
  let probe = probes.get(id);
  if (!probe) {
    probe = run(providers);
    probes.set(id, probe);
  }
  return probe;
}

async function run(providers: readonly ExecutionProvider[]): Promise<ProviderProbe> {
  ort.env.logLevel = 'fatal';
  const usable: ExecutionProvider[] = [];
  const unavailable: ProviderProbe['unavailable'] = {};
  for (const provider of providers) {
    if (provider === 'cpu') {
      usable.push(provider);
      continue;
    }
    try {
      const session = await ort.InferenceSession.create(PROBE_MODEL, {
        executionProviders: [ortProviderName(provider)],
        logSeverityLevel: 4,
      });
      await session.release();
      usable.push(provider);
    } catch (err) {
      unavailable[provider] = err instanceof Error ? err.message : String(err);
    }
  }
  return { usable, unavailable };
}
