import type { FunctionDto, NvcfClient } from '@nvcf/client';
import type { WorkerPoolOptions } from '@nvcf/kubernetes';
import { defaultGatewayUrl, IMAGES, NAMESPACE } from '@nvcf/kubernetes/names';
import type { Command } from 'commander';
import { contextFor } from '../context.ts';
import { UsageError } from '../errors.ts';

interface WorkerPoolFlags {
  function: string;
  version?: string;
  namespace: string;
  gatewayUrl?: string;
  image: string;
  gpuImage: string;
}

/** The versions asked for: the one given, else every deployed version of the function; an undeployed one is refused. */
async function versionsOf(client: NvcfClient, functionId: string, versionId?: string) {
  const versions = versionId
    ? [await client.functions.getVersion(functionId, versionId)]
    : await client.functions.listVersions(functionId);
  const deployed = versions.filter((v) => v.status !== 'INACTIVE');
  if (deployed.length > 0) return deployed;
  const what = versionId
    ? `version ${versionId} of function ${functionId} is not deployed`
    : `function ${functionId} has no deployed version`;
  throw new Error(`${what} (nvcf deploy ${functionId} ${versionId ?? '<versionId>'} …)`);
}

/** A container function's server, run beside the worker in each pod (a model function has none). */
function inferenceOf(v: FunctionDto): Pick<WorkerPoolOptions, 'inference'> {
  if (v.model || !v.containerImage) return {};
  return {
    inference: {
      image: v.containerImage,
      ...(v.containerArgs ? { command: v.containerArgs } : {}),
      env: v.containerEnvironment,
      port: v.inferencePort ?? 8000,
      healthPath: v.health?.uri ?? v.healthUri ?? '/v2/health/ready',
      ...(v.health && v.health.port !== v.inferencePort ? { healthPort: v.health.port } : {}),
    },
  };
}

export function registerKube(program: Command): void {
  const kube = program
    .command('kube')
    .description('Kubernetes manifests made from what the API says (README: "Run on Kubernetes")');

  kube
    .command('worker-pool')
    .description(
      'YAML for `kubectl apply -f -`: per deployed version, a Deployment of workers serving only it ' +
        '(WORKER_FUNCTION_VERSIONS) and a KEDA ScaledObject on its queueDepth, from minInstances (0: none ' +
        'while idle) to maxInstances; a GPU version gets the GPU image and one nvidia.com/gpu per worker',
    )
    .requiredOption('--function <functionId>', 'the function')
    .option('--version <versionId>', 'only this version (default: every deployed version)')
    .option('--namespace <namespace>', 'where the gateway and the pools run', NAMESPACE)
    .option('--gateway-url <url>', "the gateway as KEDA's operator reaches it (default: its Service in --namespace)")
    .option('--image <image>', 'the CPU worker image', IMAGES.worker)
    .option('--gpu-image <image>', 'the GPU worker image', IMAGES.workerGpu)
    .action(async (flags: WorkerPoolFlags, cmd: Command) => {
      const gatewayUrl = flags.gatewayUrl ?? defaultGatewayUrl(flags.namespace);
      if (!/^https?:\/\//.test(gatewayUrl) || !URL.canParse(gatewayUrl)) {
        throw new UsageError(`--gateway-url must be an http(s) URL, not '${gatewayUrl}'`);
      }
      const { client, json } = await contextFor(cmd);
      const pools: WorkerPoolOptions[] = [];
      for (const v of await versionsOf(client, flags.function, flags.version)) {
        const deployment = await client.deployments.get(v.id, v.versionId);
        pools.push({
          functionId: v.id,
          versionId: v.versionId,
          functionName: v.name,
          specifications: deployment.deploymentSpecifications,
          namespace: flags.namespace,
          gatewayUrl: gatewayUrl.replace(/\/+$/, ''),
          image: flags.image,
          gpuImage: flags.gpuImage,
          ...inferenceOf(v),
        });
      }
      // The schema models take over a second to load: only this command pays for them, not every `nvcf` run.
      const { workerPools, workerPoolsYaml } = await import('@nvcf/kubernetes');
      const items = workerPools(pools).map((o) => o.toJSON());
      process.stdout.write(
        json ? `${JSON.stringify({ apiVersion: 'v1', kind: 'List', items }, null, 2)}\n` : workerPoolsYaml(pools),
      );
    });
}
