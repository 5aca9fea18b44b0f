import { encodeHttpInferRequest } from '@nvcf/protocol';
import { apiReferencePaths } from '@nvcf/service-kit';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import type { Hono } from 'hono';
import { findTargetHandler, isMiddleware } from 'hono/utils/handler';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseRestrictedApis, RESTRICTED_API_GROUPS } from '../access/restricted-apis.ts';
import { createKserveHttpApp } from './kserve-app.ts';
import { type KserveFixture, simpleJsonBody, simpleTensors, startKserveFixture } from './kserve-test-fixture.ts';
import { DOCS_PATH, OPENAPI_PATH, OPENAPI_TITLE } from './openapi-routes.ts';

interface Operation {
  parameters?: { name: string; in: string }[];
  requestBody?: { content: Record<string, { schema?: unknown }> };
  responses: Record<string, { description: string; content?: Record<string, { schema?: unknown }> }>;
}
interface OpenApiDocument {
  openapi: string;
  info: { title: string; version: string };
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, unknown> };
}

let fx: KserveFixture;
let doc: OpenApiDocument;
const ajv = new Ajv2020({ strict: true, allErrors: true });
addFormats.default(ajv);
// The document's two top-level members that hold schemas; strict mode knows no other non-schema keyword here.
ajv.addVocabulary(['paths', 'components']);
const DOC_ID = 'openapi.json';

beforeAll(async () => {
  fx = await startKserveFixture({ repositoryName: 'models' });
  const res = await fetch(`${fx.url}${OPENAPI_PATH}`);
  expect(res.status).toBe(200);
  doc = (await res.json()) as OpenApiDocument;
  // `$ref: '#/components/schemas/…'` resolves against the document's own id, so every schema below is validated
  // exactly as written in the document.
  ajv.addSchema({ $id: DOC_ID, paths: doc.paths, components: doc.components });
});
afterAll(async () => {
  await fx?.close();
});

/** A JSON pointer into the document. */
const pointer = (...segments: string[]) =>
  `${DOC_ID}#/${segments.map((s) => encodeURIComponent(s.replaceAll('~', '~0').replaceAll('/', '~1'))).join('/')}`;

function validate(ref: string, value: unknown, what: string): void {
  const check = ajv.getSchema(ref);
  if (!check) throw new Error(`${what}: no schema at ${ref}`);
  if (!check(value)) throw new Error(`${what}: ${ajv.errorsText(check.errors)}\n${JSON.stringify(value)}`);
}

const fill = (template: string, params: Record<string, string>) =>
  template.replace(/\{(\w+)\}/g, (_, name: string) => {
    const value = params[name];
    if (value === undefined) throw new Error(`no value for {${name}} in ${template}`);
    return encodeURIComponent(value);
  });

/**
 * Sends the request to the fixture server and checks the answer against the document: the operation exists, the
 * status is one it documents, and a JSON body matches that status's schema (an empty body, a response that says so).
 * Returns the body, as bytes and as text.
 */
async function call(
  method: 'get' | 'post',
  template: string,
  params: Record<string, string> = {},
  init: RequestInit = {},
): Promise<{ res: Response; bytes: Uint8Array; text: string }> {
  const res = await fetch(`${fx.url}${fill(template, params)}`, { method: method.toUpperCase(), ...init });
  const bytes = new Uint8Array(await res.arrayBuffer());
  const text = new TextDecoder().decode(bytes);
  const what = `${method.toUpperCase()} ${template} → ${res.status}`;
  const op = doc.paths[template]?.[method];
  if (!op) throw new Error(`${what}: not in the document`);
  const documented = op.responses[String(res.status)];
  if (!documented) throw new Error(`${what}: status not documented (${text})`);
  if (text === '') {
    expect(documented.description.toLowerCase(), what).toContain('empty body');
    return { res, bytes, text };
  }
  const type = (res.headers.get('content-type') ?? '').split(';')[0]?.trim() ?? '';
  expect(Object.keys(documented.content ?? {}), what).toContain(type);
  if (type === 'application/json') {
    validate(
      pointer('paths', template, method, 'responses', String(res.status), 'content', type, 'schema'),
      JSON.parse(text),
      what,
    );
  }
  return { res, bytes, text };
}

const json = (body: unknown): RequestInit => ({
  body: JSON.stringify(body),
  headers: { 'content-type': 'application/json' },
});

describe('the OpenAPI document', () => {
  it('is OpenAPI 3.1 titled for the server, with the server’s version, and every component compiles', () => {
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.info.title).toBe(OPENAPI_TITLE);
    expect(doc.info.version).toBe(fx.core.serverVersion);
    for (const name of Object.keys(doc.components.schemas)) {
      expect(ajv.getSchema(pointer('components', 'schemas', name)), name).toBeTypeOf('function');
    }
  });

  it('documents every route of the assembled app', () => {
    const app: Hono = createKserveHttpApp(fx.core, { logger: silentLogger() });
    // Catch-alls that answer an error for whatever no operation matched; OpenAPI has no wildcard paths.
    const fallbacks = [
      'ALL /v2/systemsharedmemory/*', // 405
      'ALL /v2/cudasharedmemory/*', // 405
      'ALL /api/sharedmemorycontrol/*', // v1 shared memory: UNSUPPORTED
      'ALL /api/*', // v1 NOT_FOUND
    ];
    const own = [`GET ${OPENAPI_PATH}`, ...apiReferencePaths(DOCS_PATH).map((p) => `GET ${p}`)];
    const routes = app.routes
      .filter((r) => !isMiddleware(findTargetHandler(r.handler)))
      .map((r) => ({ method: r.method, path: r.path, key: `${r.method} ${r.path}` }));
    expect(routes.filter((r) => r.method === 'ALL').map((r) => r.key)).toEqual(expect.arrayContaining(fallbacks));
    const missing = routes
      .filter((r) => !fallbacks.includes(r.key) && !own.includes(r.key))
      .filter((r) => doc.paths[openApiPath(r.path)]?.[r.method.toLowerCase()] === undefined)
      .map((r) => r.key);
    expect(missing).toEqual([]);
    expect(routes.length).toBeGreaterThan(40);
    for (const path of [OPENAPI_PATH, DOCS_PATH]) expect(doc.paths[path]).toBeUndefined();
  });

  it('has the published Open Inference Protocol paths and component names', () => {
    const oip: [string, string][] = [
      ['/v2', 'get'],
      ['/v2/health/live', 'get'],
      ['/v2/health/ready', 'get'],
      ['/v2/models/{model_name}', 'get'],
      ['/v2/models/{model_name}/versions/{model_version}', 'get'],
      ['/v2/models/{model_name}/ready', 'get'],
      ['/v2/models/{model_name}/versions/{model_version}/ready', 'get'],
      ['/v2/models/{model_name}/infer', 'post'],
      ['/v2/models/{model_name}/versions/{model_version}/infer', 'post'],
    ];
    for (const [path, method] of oip) expect(doc.paths[path]?.[method], `${method} ${path}`).toBeDefined();
    expect(Object.keys(doc.components.schemas)).toEqual(
      expect.arrayContaining([
        'metadata_server_response',
        'metadata_server_error_response',
        'metadata_model_response',
        'metadata_model_error_response',
        'metadata_tensor',
        'inference_request',
        'inference_response',
        'inference_error_response',
        'request_input',
        'request_output',
        'response_output',
        'tensor_data',
        'parameters',
      ]),
    );
    const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
    const infer = doc.paths['/v2/models/{model_name}/versions/{model_version}/infer']?.post;
    expect(infer?.requestBody?.content['application/json']?.schema).toEqual(ref('inference_request'));
    expect(infer?.responses['200']?.content?.['application/json']?.schema).toEqual(ref('inference_response'));
    expect(infer?.responses['400']?.content?.['application/json']?.schema).toEqual(ref('inference_error_response'));
    expect(doc.paths['/v2']?.get?.responses['200']?.content?.['application/json']?.schema).toEqual(
      ref('metadata_server_response'),
    );
    expect(doc.paths['/v2/models/{model_name}']?.get?.responses['200']?.content?.['application/json']?.schema).toEqual(
      ref('metadata_model_response'),
    );
  });

  it('names the binary extension header and the path parameters', () => {
    const infer = doc.paths['/v2/models/{model_name}/versions/{model_version}/infer']?.post;
    expect(infer?.parameters?.map((p) => `${p.in} ${p.name}`)).toEqual([
      'path model_name',
      'path model_version',
      'header Inference-Header-Content-Length',
    ]);
    expect(Object.keys(infer?.requestBody?.content ?? {})).toEqual(['application/json', 'application/octet-stream']);
    expect(Object.keys(infer?.responses['200']?.content ?? {})).toEqual([
      'application/json',
      'application/octet-stream',
    ]);
    const stream = doc.paths['/v2/models/{model_name}/generate_stream']?.post;
    expect(Object.keys(stream?.responses['200']?.content ?? {})).toEqual(['text/event-stream']);
    expect(doc.paths['/api/status']?.get).toMatchObject({ tags: ['Triton v1'] });
  });
});

describe('real answers match the document', () => {
  it('server metadata and health', async () => {
    await call('get', '/v2');
    await call('get', '/v2/health/live');
    await call('get', '/v2/health/ready');
  });

  it('model metadata, readiness, config and statistics, and their errors', async () => {
    const simple = { model_name: 'simple' };
    const v1 = { model_name: 'simple', model_version: '1' };
    const versioned = '/v2/models/{model_name}/versions/{model_version}';
    expect((await call('get', '/v2/models/{model_name}', simple)).res.status).toBe(200);
    expect((await call('get', versioned, v1)).res.status).toBe(200);
    expect((await call('get', '/v2/models/{model_name}', { model_name: 'nope' })).res.status).toBe(400);
    expect((await call('get', versioned, { model_name: 'simple', model_version: '7' })).res.status).toBe(503);
    expect((await call('get', versioned, { model_name: 'simple', model_version: 'x' })).res.status).toBe(400);
    expect((await call('get', '/v2/models/{model_name}/ready', simple)).res.status).toBe(200);
    expect((await call('get', `${versioned}/ready`, v1)).res.status).toBe(200);
    expect((await call('get', '/v2/models/{model_name}/ready', { model_name: 'nope' })).res.status).toBe(400);
    expect((await call('get', '/v2/models/{model_name}/config', simple)).res.status).toBe(200);
    expect((await call('get', `${versioned}/config`, v1)).res.status).toBe(200);
    expect((await call('get', '/v2/models/{model_name}/stats', simple)).res.status).toBe(200);
    expect((await call('get', '/v2/models/stats')).res.status).toBe(200);
  });

  it('a JSON infer, a binary infer’s JSON parts, and refused requests', async () => {
    const infer = '/v2/models/{model_name}/infer';
    const ok = await call('post', infer, { model_name: 'simple' }, { body: simpleJsonBody() });
    expect(ok.res.status).toBe(200);
    const stats = await call('get', '/v2/models/{model_name}/stats', { model_name: 'simple' });
    expect(JSON.parse(stats.text).model_stats[0].inference_count).toBeGreaterThan(0);

    const { body, inferenceHeaderContentLength } = encodeHttpInferRequest(
      { inputs: simpleTensors() },
      { binaryInputs: true, binaryDataOutput: true },
    );
    const sent = inferenceHeaderContentLength ?? 0;
    const requestSchema = pointer('paths', infer, 'post', 'requestBody', 'content', 'application/json', 'schema');
    validate(requestSchema, JSON.parse(body.subarray(0, sent).toString('utf8')), 'binary request JSON part');
    const binary = await call(
      'post',
      `/v2/models/{model_name}/versions/{model_version}/infer`,
      { model_name: 'simple', model_version: '1' },
      { body: new Uint8Array(body), headers: { 'Inference-Header-Content-Length': String(sent) } },
    );
    expect(binary.res.status).toBe(200);
    expect(binary.res.headers.get('content-type')).toBe('application/octet-stream');
    const jsonLength = Number(binary.res.headers.get('inference-header-content-length'));
    expect(jsonLength).toBeGreaterThan(0);
    const answer = JSON.parse(new TextDecoder().decode(binary.bytes.subarray(0, jsonLength))) as { outputs: unknown[] };
    validate(
      pointer('paths', infer, 'post', 'responses', '200', 'content', 'application/json', 'schema'),
      answer,
      'binary response JSON part',
    );
    expect(answer.outputs).toHaveLength(2);

    const unknown = await call('post', infer, { model_name: 'nope' }, { body: simpleJsonBody() });
    expect(unknown.res.status).toBe(400);
    const short = JSON.stringify({ inputs: [{ name: 'INPUT0', datatype: 'INT32', shape: [1, 16], data: [1, 2] }] });
    expect((await call('post', infer, { model_name: 'simple' }, { body: short })).res.status).toBe(400);
    expect((await call('post', infer, { model_name: 'simple' }, { body: '{not json' })).res.status).toBe(400);
  });

  it('generate and generate_stream', async () => {
    const a = Array.from({ length: 16 }, (_, i) => i);
    const input = { INPUT0: a, INPUT1: a.map(() => 1), id: 'g' };
    const one = await call('post', '/v2/models/{model_name}/generate', { model_name: 'simple' }, json(input));
    expect(one.res.status).toBe(200);
    const stream = await call('post', '/v2/models/{model_name}/generate_stream', { model_name: 'simple' }, json(input));
    expect(stream.res.status).toBe(200);
    const events = stream.text.split('\n\n').filter((e) => e.startsWith('data: '));
    expect(events).toHaveLength(1);
    for (const e of events) validate(pointer('components', 'schemas', 'generate_response'), JSON.parse(e.slice(6)), e);
    const bad = await call('post', '/v2/models/{model_name}/generate', { model_name: 'nope' }, json(input));
    expect(bad.res.status).toBe(400);
  });

  it('repository index, load and its errors', async () => {
    expect((await call('post', '/v2/repository/index')).res.status).toBe(200);
    expect((await call('post', '/v2/repository/index', {}, json({ ready: true }))).res.status).toBe(200);
    expect(
      (await call('post', '/v2/repository/{repository_name}/index', { repository_name: 'models' })).res.status,
    ).toBe(200);
    expect((await call('post', '/v2/repository/index', {}, json({ ready: 'yes' }))).res.status).toBe(400);
    const load = '/v2/repository/models/{model_name}/load';
    expect((await call('post', load, { model_name: 'identity_int8' })).res.status).toBe(200);
    const override = json({ parameters: { unknown: 1 } });
    expect((await call('post', load, { model_name: 'identity_int8' }, override)).res.status).toBe(400);
    expect((await call('post', load, { model_name: 'no_such_model' })).res.status).toBe(500);
  });

  it('shared memory status, registration errors and unregistration', async () => {
    expect((await call('get', '/v2/systemsharedmemory/status')).res.status).toBe(200);
    expect(await call('post', '/v2/systemsharedmemory/register', {}, json({}))).toMatchObject({ res: { status: 400 } });
    const region = { region_name: 'nothing' };
    const register = '/v2/systemsharedmemory/region/{region_name}/register';
    expect((await call('post', register, region, json({ key: 'x' }))).res.status).toBe(400);
    expect((await call('post', '/v2/systemsharedmemory/region/{region_name}/unregister', region)).res.status).toBe(200);
    expect((await call('get', '/v2/cudasharedmemory/status')).res.status).toBe(200);
    expect((await call('get', '/v2/cudasharedmemory/region/{region_name}/status', region)).res.status).toBe(404);
  });

  it('Triton v1 health and status', async () => {
    const live = await call('get', '/api/health/{mode}', { mode: 'live' });
    expect(live.res.headers.get('nv-status')).toContain('SUCCESS');
    const status = await call(
      'get',
      '/api/status/{model}',
      { model: 'simple' },
      { headers: { accept: 'application/json' } },
    );
    expect(status.res.headers.get('content-type')).toBe('application/json');
    expect((await call('get', '/api/status/{model}', { model: 'nope' })).res.status).toBe(400);
  });
});

describe('/openapi.json and /docs', () => {
  it('/docs is an HTML page over /openapi.json', async () => {
    const res = await fetch(`${fx.url}${DOCS_PATH}`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/html');
    expect(await res.text()).toContain(OPENAPI_PATH);
  });

  it('are never restricted, whatever groups are', async () => {
    const restrictedApis = parseRestrictedApis(`${RESTRICTED_API_GROUPS.join(',')}:x-key=secret`);
    const app = createKserveHttpApp(fx.core, { logger: silentLogger(), restrictedApis });
    expect((await app.request('/v2')).status).toBe(403);
    expect((await app.request('/api/health/live')).status).toBe(400);
    for (const path of [OPENAPI_PATH, DOCS_PATH, `${DOCS_PATH}/scalar.js`]) {
      expect((await app.request(path)).status, path).toBe(200);
    }
  });
});

/** Hono's `/v2/models/:model_name`, `:action{load|unload}` → OpenAPI's `{model_name}`, `{action}`. */
function openApiPath(path: string): string {
  return path
    .split('/')
    .map((segment) => segment.replace(/^:([^{?]+)(\{.*\})?\??$/, '{$1}'))
    .join('/');
}

function silentLogger() {
  return pino({ level: 'silent' });
}
