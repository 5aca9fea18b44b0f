import { setFlagsFromString } from 'node:v8';

/**
 * With `enabled`, memory outside V8's heap (Buffers: request bodies, tensors) counts towards the heap's own
 * limit, which grows with what stays alive, instead of V8's fixed allowance of 64 MB allocated since the last
 * full collection. Under that allowance a worker taking 600 KB tensor bodies ran a full mark-compact of its
 * whole heap every 30–150 ms although the bodies died young and scavenges alone would have freed them:
 * V8's helper threads used half a core and the model threads waited for it (see README, Performance). The
 * flag is read at each collection, so setting it at start-up, after the modules loaded, takes effect.
 */
export function countExternalMemoryInHeapLimit(enabled: boolean): void {
  if (enabled) setFlagsFromString('--external-memory-accounted-in-global-limit');
}
