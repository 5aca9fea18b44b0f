import type { CreateFunctionRequest, FunctionDto, FunctionVisibility, ModelReference, TensorSpec } from '@nvcf/client';
import { type Command, Option } from 'commander';
import { commaList, readJsonFile } from '../args.ts';
import { contextFor } from '../context.ts';
import { UsageError } from '../errors.ts';
import type { CellValue, Column } from '../output.ts';
import { parseSecretArgs } from '../secret-args.ts';
import { registerFunctionAuthorizations } from './authorizations.ts';
import { registerSecrets } from './secrets.ts';

export const functionColumns: readonly Column<FunctionDto>[] = [
  { header: 'NAME', value: (f) => f.name },
  { header: 'FUNCTION ID', value: (f) => f.id },
  { header: 'VERSION ID', value: (f) => f.versionId },
  { header: 'STATUS', value: (f) => f.status },
];

const tensors = (specs: TensorSpec[] | undefined) =>
  specs?.map((t) => `${t.name} ${t.datatype} [${t.shape.join(',')}]`);

/** One version as a two-column table: what a caller needs to invoke it. */
export function functionFields(f: FunctionDto): Record<string, CellValue> {
  return {
    name: f.name,
    id: f.id,
    versionId: f.versionId,
    status: f.status,
    inferenceUrl: f.inferenceUrl,
    apiBodyFormat: f.apiBodyFormat,
    functionType: f.functionType,
    models: f.models.map((m) => m.uri),
    containerImage: f.containerImage,
    containerArgs: f.containerArgs,
    inputs: tensors(f.model?.inputs),
    outputs: tensors(f.model?.outputs),
    instances: f.activeInstances.length,
    createdAt: f.createdAt,
    description: f.description,
    tags: f.tags.join(','),
  };
}

interface CreateFlags {
  file?: string;
  functionId?: string;
  name?: string;
  inferenceUrl?: string;
  model?: string;
  modelName?: string;
  modelVersion?: string;
  apiBodyFormat?: CreateFunctionRequest['apiBodyFormat'];
  functionType?: CreateFunctionRequest['functionType'];
  description?: string;
  tags?: string[];
  containerImage?: string;
  containerArgs?: string;
  inferencePort?: number;
  healthUri?: string;
  env?: string[];
  secret?: string[];
}

/** `--model simple/1`, `--model model-repository://simple/1` or `--model asset://<id>` as a model reference. */
function modelReference(flags: CreateFlags, functionName: string | undefined): ModelReference | undefined {
  if (!flags.model) return undefined;
  const uri = flags.model.includes('://') ? flags.model : `model-repository://${flags.model}`;
  const repo = /^model-repository:\/\/([^/]+)\/([^/]+)$/.exec(uri);
  const name = flags.modelName ?? repo?.[1] ?? functionName;
  if (!name) throw new UsageError('give --model-name for an asset:// model');
  return { name, version: flags.modelVersion ?? repo?.[2] ?? '1', uri };
}

/** `--env KEY=VALUE` as a containerEnvironment entry. */
function keyValue(text: string): { key: string; value: string } {
  const at = text.indexOf('=');
  if (at < 1) throw new UsageError(`--env takes KEY=VALUE, not '${text}'`);
  return { key: text.slice(0, at), value: text.slice(at + 1) };
}

/** `--inference-port 8000` as a port number. */
function port(text: string): number {
  const n = Number(text);
  if (!Number.isInteger(n) || n < 1 || n > 65535) throw new UsageError(`--inference-port takes a port, not '${text}'`);
  return n;
}

const collect = (value: string, previous: string[] = []) => [...previous, value];

/** The create request: `--file` as the base, flags over it. */
async function createRequest(flags: CreateFlags): Promise<CreateFunctionRequest> {
  const base = flags.file ? await readJsonFile(flags.file) : {};
  if (typeof base !== 'object' || base === null || Array.isArray(base)) {
    throw new UsageError(`${flags.file} must hold a JSON object (a CreateFunctionRequest)`);
  }
  const req = { ...(base as Partial<CreateFunctionRequest>) };
  if (flags.name) req.name = flags.name;
  const model = modelReference(flags, req.name);
  if (model) req.models = [model];
  if (flags.inferenceUrl) req.inferenceUrl = flags.inferenceUrl;
  else if (!req.inferenceUrl && req.models?.[0]) req.inferenceUrl = `/v2/models/${req.models[0].name}/infer`;
  if (flags.apiBodyFormat) req.apiBodyFormat = flags.apiBodyFormat;
  if (flags.functionType) req.functionType = flags.functionType;
  if (flags.description !== undefined) req.description = flags.description;
  if (flags.containerImage) req.containerImage = flags.containerImage;
  if (flags.containerArgs !== undefined) req.containerArgs = flags.containerArgs;
  if (flags.inferencePort !== undefined) req.inferencePort = flags.inferencePort;
  if (flags.healthUri) req.healthUri = flags.healthUri;
  if (flags.env) req.containerEnvironment = [...(req.containerEnvironment ?? []), ...flags.env.map(keyValue)];
  if (flags.tags) req.tags = flags.tags;
  if (flags.secret) req.secrets = [...(req.secrets ?? []), ...(await parseSecretArgs(flags.secret))];
  if (!req.name) throw new UsageError('give --name (or a "name" in --file)');
  if (!req.inferenceUrl) throw new UsageError('give --inference-url (a container function) or --model');
  return { ...req, name: req.name, inferenceUrl: req.inferenceUrl };
}

export function registerFunctions(program: Command): void {
  const functions = program
    .command('functions')
    .description('register, list, read and delete functions; share them with other accounts');

  functions
    .command('list')
    .description('every version of every function the key may see')
    .option(
      '--visibility <kinds>',
      "private (the key's account's own), authorized (shared with it by other accounts), public; default all",
      commaList,
    )
    .action(async (opts: { visibility?: FunctionVisibility[] }, cmd: Command) => {
      const { client, out } = await contextFor(cmd);
      const list = await client.functions.list(opts.visibility?.length ? { visibility: opts.visibility } : {});
      out.list(list, functionColumns);
    });

  functions
    .command('get')
    .description("a function's versions, or one version in full with --version")
    .argument('<functionId>')
    .option('--version <versionId>', 'one version: its model inputs and outputs, deployment state, …')
    .action(async (functionId: string, opts: { version?: string }, cmd: Command) => {
      const { client, out } = await contextFor(cmd);
      if (opts.version) {
        const f = await client.functions.getVersion(functionId, opts.version);
        out.record(functionFields(f), f);
      } else {
        out.list(await client.functions.listVersions(functionId), functionColumns);
      }
    });

  functions
    .command('create')
    .description('register a function (or, with --function-id, a new version of one); INACTIVE until deployed')
    .option('--file <spec.json>', 'a CreateFunctionRequest as JSON (- for stdin); the flags below override it')
    .option('--function-id <functionId>', 'add a version to this function instead of registering a new one')
    .option('--name <name>', 'the function name')
    .option('--model <uri>', 'its model: NAME/VERSION of a model the workers hold, or asset://<assetId>')
    .option('--model-name <name>', 'the model name (default: from --model, else --name)')
    .option('--model-version <version>', 'the model version (default: from --model, else 1)')
    .option('--inference-url <path>', 'the path invocations reach (default /v2/models/<model>/infer)')
    .option('--container-image <image>', 'a container function: the image of its HTTP inference server')
    .option('--container-args <command>', "a container function's command (process mode runs it with sh -c)")
    .option('--inference-port <port>', 'the port the inference server listens on', port)
    .option('--health-uri <path>', "the server's health check path (default /v2/health/ready)")
    .option('--env <KEY=VALUE>', 'an environment variable of the container (repeatable)', collect)
    .option('--secret <NAME=VALUE>', 'a secret of the container: VALUE, @FILE or - for stdin (repeatable)', collect)
    .addOption(new Option('--api-body-format <format>', 'request body format').choices(['PREDICT_V2', 'CUSTOM']))
    .addOption(new Option('--function-type <type>').choices(['DEFAULT', 'STREAMING', 'LLM']))
    .option('--description <text>')
    .option('--tags <a,b>', 'tags', commaList)
    .action(async (flags: CreateFlags, cmd: Command) => {
      const req = await createRequest(flags);
      const { client, out } = await contextFor(cmd);
      const f = flags.functionId
        ? await client.functions.createVersion(flags.functionId, req)
        : await client.functions.create(req);
      out.record(functionFields(f), f);
    });

  registerSecrets(functions);

  functions
    .command('delete')
    .description('delete a version (the function with its last one)')
    .argument('<functionId>')
    .requiredOption('--version <versionId>', 'the version to delete')
    .action(async (functionId: string, opts: { version: string }, cmd: Command) => {
      const { client, out } = await contextFor(cmd);
      await client.functions.deleteVersion(functionId, opts.version);
      out.done(`deleted ${functionId} version ${opts.version}`, {
        functionId,
        versionId: opts.version,
        deleted: true,
      });
    });

  registerFunctionAuthorizations(functions);
}
