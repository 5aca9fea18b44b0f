import { ScaledObject, TriggerAuthentication } from '@kubernetes-models/keda/keda.sh/v1alpha1';
import { Deployment, StatefulSet } from 'kubernetes-models/apps/v1';
import { HorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2';
import { NetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1';
import { ConfigMap, Namespace, Secret, Service } from 'kubernetes-models/v1';
import { parseAllDocuments, stringify } from 'yaml';

/** A Kubernetes object as YAML or JSON holds it. */
export interface Manifest {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
  [field: string]: unknown;
}

interface ModelClass {
  new (data: never): { validate(): void; toJSON(): unknown };
  apiVersion: string;
  kind: string;
}

/** Every kind the manifests here use, with the model that validates it against its API schema. */
const MODELS: readonly ModelClass[] = [
  ConfigMap,
  Deployment,
  HorizontalPodAutoscaler,
  Namespace,
  NetworkPolicy,
  PodDisruptionBudget,
  ScaledObject,
  Secret,
  Service,
  StatefulSet,
  TriggerAuthentication,
];

/**
 * Checks one object against the Kubernetes (or KEDA) schema of its `apiVersion` and `kind`; throws naming the
 * object and every problem. A kind not listed here is refused too: nothing goes unchecked.
 */
export function validateManifest(doc: unknown): Manifest {
  const m = doc as Partial<Manifest> | null;
  const what = `${m?.kind ?? '(no kind)'} ${m?.metadata?.name ?? '(no name)'}`;
  const Model = MODELS.find((c) => c.apiVersion === m?.apiVersion && c.kind === m?.kind);
  if (!Model) throw new Error(`${what}: no schema for ${m?.apiVersion}/${m?.kind} (an unknown kind is not allowed)`);
  try {
    new Model(doc as never).validate();
  } catch (err) {
    throw new Error(`${what}: ${(err as Error).message}`);
  }
  return doc as Manifest;
}

/** Every document of a YAML stream, validated; an empty document (a trailing `---`) is skipped. */
export function parseManifests(text: string): Manifest[] {
  return parseAllDocuments(text)
    .map((d) => {
      if (d.errors.length > 0) throw new Error(`YAML: ${d.errors.map((e) => e.message).join('; ')}`);
      return d.toJS() as unknown;
    })
    .filter((doc) => doc !== null && doc !== undefined)
    .map(validateManifest);
}

/** A YAML stream for `kubectl apply -f -`, `header` as its leading comment lines. */
export function manifestsYaml(objects: readonly { toJSON(): unknown }[], header: readonly string[] = []): string {
  const comment = header.map((line) => `# ${line}\n`).join('');
  return comment + objects.map((o) => stringify(o.toJSON(), { lineWidth: 0 })).join('---\n');
}
