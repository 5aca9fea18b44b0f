import { AppError } from '@nvcf/protocol';
import { Hono } from 'hono';
import { type DescribeRouteOptions, describeRoute } from 'hono-openapi';
import type { SharedMemoryRegion, SystemSharedMemory } from '../shm/system-shared-memory.ts';
import { readOptionalJsonObject } from './json-body.ts';
import { kserveError } from './kserve-error.ts';
import {
  CudaSharedMemoryRegisterRequest,
  CudaSharedMemoryStatusResponse,
  SystemSharedMemoryRegisterRequest,
  SystemSharedMemoryStatusResponse,
} from './openapi-extension-schemas.ts';
import { emptyResponse, errorResponses, jsonContent, jsonResponse, RESTRICTED } from './openapi-responses.ts';

/** A register body is a few fields; anything larger is not one. */
const MAX_REGISTER_BODY_BYTES = 64 * 1024;

const json = (value: unknown) =>
  new Response(JSON.stringify(value), { status: 200, headers: { 'content-type': 'application/json' } });
/** Register and unregister answer 200 with an empty body, as Triton does. */
const done = () => new Response(null, { status: 200, headers: { 'content-type': 'application/json' } });

const asStatus = (r: SharedMemoryRegion) => ({ name: r.name, key: r.key, offset: r.offset, byte_size: r.byteSize });

const DISABLED = 'Client shared memory is disabled (WORKER_ALLOW_CLIENT_SHM=false; Triton: --allow-client-shm).';

const REGION_NAME = {
  name: 'region_name',
  in: 'path',
  required: true,
  description: 'The name the region is registered under.',
  schema: { type: 'string' },
} as const;

/** An operation of Triton's shared memory extension, with the region parameter where its path has one. */
const describeShm = (spec: DescribeRouteOptions, region: boolean) =>
  describeRoute({
    tags: ['shared memory'],
    ...spec,
    ...(region ? { parameters: [REGION_NAME] } : {}),
    responses: { ...spec.responses, ...errorResponses({ 403: RESTRICTED }) },
  });

const sysStatus = (region: boolean) =>
  describeShm(
    {
      summary: region ? 'System shared memory region status' : 'System shared memory status',
      description: 'Triton shared memory extension: the registered system shared memory regions.',
      responses: {
        200: jsonResponse('The regions.', SystemSharedMemoryStatusResponse),
        ...(region ? errorResponses({ 404: 'No region of that name.' }) : {}),
      },
    },
    region,
  );

const sysRegister = (region: boolean) =>
  describeShm(
    {
      summary: 'Register a system shared memory region',
      description:
        'Triton shared memory extension: makes a POSIX shared memory object (its `key`, under /dev/shm) a region ' +
        'that inputs may be read from and outputs written to. Without a region name in the path, always 400.',
      requestBody: { required: true, content: jsonContent(SystemSharedMemoryRegisterRequest) },
      responses: {
        200: emptyResponse('Registered.'),
        ...errorResponses(
          region
            ? {
                400: 'A malformed body, a name already taken, an invalid key, or a range outside the object.',
                500: 'The key names no object that can be opened.',
                501: DISABLED,
              }
            : { 400: 'No region name.' },
        ),
      },
    },
    region,
  );

const sysUnregister = (region: boolean) =>
  describeShm(
    {
      summary: region ? 'Unregister a system shared memory region' : 'Unregister every system shared memory region',
      description: 'Triton shared memory extension.',
      responses: {
        200: emptyResponse('Unregistered (also when nothing was registered under the name).'),
        ...errorResponses({ 501: DISABLED }),
      },
    },
    region,
  );

const cudaStatus = (region: boolean) =>
  describeShm(
    {
      summary: region ? 'CUDA shared memory region status' : 'CUDA shared memory status',
      description: 'Triton shared memory extension, as a server without GPUs answers it: no region is ever registered.',
      responses: region
        ? errorResponses({ 404: 'No region of that name (there never is).' })
        : { 200: jsonResponse('No regions.', CudaSharedMemoryStatusResponse) },
    },
    region,
  );

const cudaRegister = (region: boolean) =>
  describeShm(
    {
      summary: 'Register a CUDA shared memory region',
      description: 'Triton shared memory extension: always refused, this server has no GPUs.',
      requestBody: { required: true, content: jsonContent(CudaSharedMemoryRegisterRequest) },
      responses: errorResponses(region ? { 400: 'GPUs not supported.', 501: DISABLED } : { 400: 'No region name.' }),
    },
    region,
  );

const cudaUnregister = (region: boolean) =>
  describeShm(
    {
      summary: region ? 'Unregister a CUDA shared memory region' : 'Unregister every CUDA shared memory region',
      description: 'Triton shared memory extension: nothing to unregister, so it succeeds.',
      responses: { 200: emptyResponse('Done.') },
    },
    region,
  );

/**
 * Triton's shared memory extension over HTTP: `/v2/systemsharedmemory[/region/{name}]/status|register|unregister`
 * on the given regions, and `/v2/cudasharedmemory/…` as a server without GPUs answers it (status lists
 * nothing, register is refused, unregister is a no-op), so clients that clear both kinds first go on.
 */
export function sharedMemoryRoutes(shm: SystemSharedMemory): Hono {
  const app = new Hono();
  const sys = '/v2/systemsharedmemory';
  app.get(`${sys}/status`, sysStatus(false), () => json(shm.status().map(asStatus)));
  app.get(`${sys}/region/:region_name/status`, sysStatus(true), (c) =>
    json(shm.status(c.req.param('region_name')).map(asStatus)),
  );
  app.post(`${sys}/register`, sysRegister(false), () => {
    throw new AppError('INVALID_ARGUMENT', "'region name' is necessary to register system shared memory region");
  });
  app.post(`${sys}/region/:region_name/register`, sysRegister(true), async (c) => {
    const body =
      (await readOptionalJsonObject(c.req.raw, MAX_REGISTER_BODY_BYTES, 'shared memory register request')) ?? {};
    const { key, byte_size: byteSize, offset = 0 } = body;
    if (key === undefined) throw new AppError('INVALID_ARGUMENT', "Shared memory register request has no 'key' field");
    if (byteSize === undefined) {
      throw new AppError('INVALID_ARGUMENT', "Shared memory register request has no 'byte_size' field");
    }
    if (typeof key !== 'string') throw new AppError('INVALID_ARGUMENT', "'key' must be a string");
    shm.register({
      name: c.req.param('region_name'),
      key,
      offset: byteField(offset, 'offset'),
      byteSize: byteField(byteSize, 'byte_size'),
    });
    return done();
  });
  app.post(`${sys}/unregister`, sysUnregister(false), () => {
    shm.unregister();
    return done();
  });
  app.post(`${sys}/region/:region_name/unregister`, sysUnregister(true), (c) => {
    shm.unregister(c.req.param('region_name'));
    return done();
  });

  const cuda = '/v2/cudasharedmemory';
  app.get(`${cuda}/status`, cudaStatus(false), () => json([]));
  app.get(`${cuda}/region/:region_name/status`, cudaStatus(true), (c) => {
    throw new AppError('NOT_FOUND', `Unable to find cuda shared memory region: '${c.req.param('region_name')}'`);
  });
  app.post(`${cuda}/region/:region_name/register`, cudaRegister(true), (c) => {
    // Refused as Triton refuses it: the allow switch first, then the missing GPU support.
    shm.assertEnabled();
    const name = c.req.param('region_name');
    throw new AppError(
      'INVALID_ARGUMENT',
      `failed to register CUDA shared memory region: '${name}', GPUs not supported`,
    );
  });
  app.post(`${cuda}/register`, cudaRegister(false), () => {
    throw new AppError('INVALID_ARGUMENT', "'region name' is necessary to register cuda shared memory region");
  });
  app.post(`${cuda}/unregister`, cudaUnregister(false), () => done());
  app.post(`${cuda}/region/:region_name/unregister`, cudaUnregister(true), () => done());

  // A known route with the wrong method: Triton's 405.
  for (const base of [sys, cuda]) {
    app.all(`${base}/*`, () => kserveError(405, 'Method Not Allowed'));
  }
  return app;
}

function byteField(value: unknown, field: string): number {
  if (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0) return value;
  throw new AppError('INVALID_ARGUMENT', `shared memory register request: '${field}' must be a non-negative integer`);
}
