import { AppError } from '@nvcf/protocol';
import { Hono } from 'hono';
import type { SharedMemoryRegion, SystemSharedMemory } from '../shm/system-shared-memory.ts';
import { readOptionalJsonObject } from './json-body.ts';
import { kserveError } from './kserve-error.ts';

/** A register body is a few fields; anything larger is not one. */
const MAX_REGISTER_BODY_BYTES = 64 * 1024;

const json = (value: unknown) =>
  new Response(JSON.stringify(value), { status: 200, headers: { 'content-type': 'application/json' } });
/** Register and unregister answer 200 with an empty body, as Triton does. */
const done = () => new Response(null, { status: 200, headers: { 'content-type': 'application/json' } });

const asStatus = (r: SharedMemoryRegion) => ({ name: r.name, key: r.key, offset: r.offset, byte_size: r.byteSize });

/**
 * Triton's shared memory extension over HTTP: `/v2/systemsharedmemory[/region/{name}]/status|register|unregister`
 * on the given regions, and `/v2/cudasharedmemory/…` as a server without GPUs answers it (status lists
 * nothing, register is refused, unregister is a no-op), so clients that clear both kinds first go on.
 */
export function sharedMemoryRoutes(shm: SystemSharedMemory): Hono {
  const app = new Hono();
  const sys = '/v2/systemsharedmemory';
  app.get(`${sys}/status`, () => json(shm.status().map(asStatus)));
  app.get(`${sys}/region/:name/status`, (c) => json(shm.status(c.req.param('name')).map(asStatus)));
  app.post(`${sys}/register`, () => {
    throw new AppError('INVALID_ARGUMENT', "'region name' is necessary to register system shared memory region");
  });
  app.post(`${sys}/region/:name/register`, async (c) => {
    const body =
      (await readOptionalJsonObject(c.req.raw, MAX_REGISTER_BODY_BYTES, 'shared memory register request')) ?? {};
    const { key, byte_size: byteSize, offset = 0 } = body;
    if (key === undefined) throw new AppError('INVALID_ARGUMENT', "Shared memory register request has no 'key' field");
    if (byteSize === undefined) {
      throw new AppError('INVALID_ARGUMENT', "Shared memory register request has no 'byte_size' field");
    }
    if (typeof key !== 'string') throw new AppError('INVALID_ARGUMENT', "'key' must be a string");
    shm.register({
      name: c.req.param('name'),
      key,
      offset: byteField(offset, 'offset'),
      byteSize: byteField(byteSize, 'byte_size'),
    });
    return done();
  });
  app.post(`${sys}/unregister`, () => {
    shm.unregister();
    return done();
  });
  app.post(`${sys}/region/:name/unregister`, (c) => {
    shm.unregister(c.req.param('name'));
    return done();
  });

  const cuda = '/v2/cudasharedmemory';
  app.get(`${cuda}/status`, () => json([]));
  app.get(`${cuda}/region/:name/status`, (c) => {
    throw new AppError('NOT_FOUND', `Unable to find cuda shared memory region: '${c.req.param('name')}'`);
  });
  app.post(`${cuda}/region/:name/register`, (c) => {
    // Refused as Triton refuses it: the allow switch first, then the missing GPU support.
    shm.assertEnabled();
    const name = c.req.param('name');
    throw new AppError(
      'INVALID_ARGUMENT',
      `failed to register CUDA shared memory region: '${name}', GPUs not supported`,
    );
  });
  app.post(`${cuda}/register`, () => {
    throw new AppError('INVALID_ARGUMENT', "'region name' is necessary to register cuda shared memory region");
  });
  app.post(`${cuda}/unregister`, () => done());
  app.post(`${cuda}/region/:name/unregister`, () => done());

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
