import { type DeploymentDto, type DeploymentRequest, type DeploymentSpecification, NvcfError } from '@nvcf/client';
import type { Command } from 'commander';
import { integer, readJsonFile } from '../args.ts';
import { contextFor } from '../context.ts';
import { UsageError } from '../errors.ts';
import type { CellValue } from '../output.ts';
import { functionFields } from './functions.ts';

interface DeployFlags {
  file?: string;
  update?: boolean;
  gpu: string;
  instanceType: string;
  minInstances: number;
  maxInstances?: number;
  maxRequestConcurrency?: number;
}

function deploymentFields(d: DeploymentDto): Record<string, CellValue> {
  return {
    functionId: d.functionId,
    versionId: d.functionVersionId,
    status: d.functionStatus,
    specifications: d.deploymentSpecifications.map(
      (s) =>
        `${s.gpu} ${s.instanceType} min=${s.minInstances} max=${s.maxInstances}` +
        (s.maxRequestConcurrency ? ` concurrency=${s.maxRequestConcurrency}` : ''),
    ),
  };
}

/** `--file` as given (a DeploymentRequest), else one specification from the flags. */
async function deploymentRequest(flags: DeployFlags): Promise<DeploymentRequest> {
  if (flags.file) {
    const body = await readJsonFile(flags.file);
    const specs = (body as { deploymentSpecifications?: unknown } | null)?.deploymentSpecifications;
    if (!Array.isArray(specs)) throw new UsageError(`${flags.file} must hold {"deploymentSpecifications": [...]}`);
    return body as DeploymentRequest;
  }
  const spec: DeploymentSpecification = {
    gpu: flags.gpu,
    instanceType: flags.instanceType,
    minInstances: flags.minInstances,
    maxInstances: flags.maxInstances ?? Math.max(1, flags.minInstances),
    ...(flags.maxRequestConcurrency ? { maxRequestConcurrency: flags.maxRequestConcurrency } : {}),
  };
  return { deploymentSpecifications: [spec] };
}

export function registerDeploy(program: Command): void {
  program
    .command('deploy')
    .description('deploy a function version (it becomes invocable), or change its deployment with --update')
    .argument('<functionId>')
    .argument('<versionId>')
    .option('--file <deployment.json>', 'a DeploymentRequest as JSON (- for stdin) instead of the flags below')
    .option('--update', 'change an existing deployment (gpu cannot change)')
    .option('--gpu <gpu>', 'GPU type', 'CPU')
    .option('--instance-type <type>', 'instance type', 'cpu.x1')
    .option('--min-instances <n>', 'workers to keep (0: requests wait in the queue for one)', integer(0), 1)
    .option('--max-instances <n>', 'default: max(1, --min-instances)', integer(1))
    .option('--max-request-concurrency <n>', 'jobs of this version a worker runs at a time', integer(1, 1024))
    .action(async (functionId: string, versionId: string, flags: DeployFlags, cmd: Command) => {
      const req = await deploymentRequest(flags);
      const { client, out } = await contextFor(cmd);
      const d = flags.update
        ? await client.deployments.update(functionId, versionId, req)
        : await client.deployments.create(functionId, versionId, req).catch((err: unknown) => {
            // The gateway says "use PUT"; in this CLI that is a flag.
            if (!(err instanceof NvcfError) || err.status !== 400 || !/already deployed/.test(err.detail)) throw err;
            const detail = `${err.detail} (nvcf deploy --update)`;
            throw new NvcfError(
              err.status,
              { ...err.problem, detail },
              err.requestId ? { requestId: err.requestId } : {},
            );
          });
      out.record(deploymentFields(d), d);
    });

  program
    .command('undeploy')
    .description('undeploy a function version (workers finish its in-flight requests); it is INACTIVE again')
    .argument('<functionId>')
    .argument('<versionId>')
    .action(async (functionId: string, versionId: string, _opts, cmd: Command) => {
      const { client, out } = await contextFor(cmd);
      const f = await client.deployments.delete(functionId, versionId);
      out.record(functionFields(f), f);
    });
}
