import { apiReferencePaths, createLogger } from '@nvcf/service-kit';
import { createOpenApiValidator, type OpenApiDocument } from '@nvcf/testing';
import type { Hono } from 'hono';
import { findTargetHandler, isMiddleware } from 'hono/utils/handler';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createGatewayApp, type GatewayAppDeps } from '../app.ts';
import { consolePaths } from '../console/console-routes.ts';
import { createGatewayMetrics } from '../metrics/gateway-metrics.ts';
import { createResultLinks } from '../results/result-links.ts';
import { DOCS_PATH, OPENAPI_PATH, OPENAPI_TITLE } from './openapi-routes.ts';

/**
 * A dependency that throws when anything reads it: building the app and serving the document must not touch a
 * single service (no Redis, no store), so any use is a bug this test should hear about.
 */
function untouched<T extends object>(name: string): T {
  return new Proxy({} as T, {
    get(_target, prop) {
      throw new Error(`${name}.${String(prop)} was used while only building routes`);
    },
  });
}

function buildApp(): Hono {
  const deps: GatewayAppDeps = {
    logger: createLogger({ name: 'openapi-test', level: 'silent' }),
    redis: untouched('redis'),
    functions: untouched('functions'),
    access: untouched('access'),
    authorizations: untouched('authorizations'),
    resolver: untouched('resolver'),
    keys: untouched('keys'),
    queues: untouched('queues'),
    clusterGroups: untouched('clusterGroups'),
    limiter: untouched('limiter'),
    invocations: untouched('invocations'),
    cancellation: untouched('cancellation'),
    auth: untouched('auth'),
    apiKeys: untouched('apiKeys'),
    assets: untouched('assets'),
    results: createResultLinks({
      objects: untouched('objects'),
      signingSecret: 'openapi-coverage-test-secret-of-enough-length',
      objectKey: (id) => id,
      logger: createLogger({ name: 'openapi-test', level: 'silent' }),
    }),
    streaming: untouched('streaming'),
    maxBodyBytes: 1024,
    defaultPollSeconds: 60,
    healthTimeoutMs: 1000,
    forwardHeaders: [],
    maxOpenRequestsPerCredential: 0,
    metrics: createGatewayMetrics(),
    console: true,
  };
  return createGatewayApp(deps);
}

/** Hono's `:name` (and `:name{regex}`) → OpenAPI's `{name}`. */
const openApiPath = (path: string) => path.replace(/:(\w+)(\{[^}]*\})?/g, '{$1}');

const app = buildApp();
const served = await app.request(OPENAPI_PATH, { headers: { origin: 'https://client.example' } });
const doc = (await served.json()) as OpenApiDocument;

describe('the OpenAPI document', () => {
  it('is served without a credential, OpenAPI 3.1, with the Scalar reference beside it', async () => {
    expect(served.status).toBe(200);
    expect(served.headers.get('access-control-allow-origin')).toBe('*');
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.info.title).toBe(OPENAPI_TITLE);
    expect(doc.info.version).toMatch(/^\d+\.\d+\.\d+/);
    expect(doc).toMatchObject({ servers: [{ url: '/' }] });
    const docs = await app.request(DOCS_PATH);
    expect(docs.status).toBe(200);
    expect(docs.headers.get('content-type')).toMatch(/text\/html/);
    expect(await docs.text()).toContain(OPENAPI_PATH);
    // Its script comes from the gateway itself, never a CDN.
    const script = await app.request(`${DOCS_PATH}/scalar.js`);
    expect(script.status).toBe(200);
    expect(script.headers.get('content-type')).toMatch(/javascript/);
    expect((await script.arrayBuffer()).byteLength).toBeGreaterThan(100_000);
  });

  it('documents every route of the assembled app, and nothing else', () => {
    // The console's page and files are the API's client, not part of it: deliberately left out, like /docs.
    const own = [`GET ${OPENAPI_PATH}`, ...[...apiReferencePaths(DOCS_PATH), ...consolePaths()].map((p) => `GET ${p}`)];
    // Middleware entries (CORS, the access log, describeRoute and auth on each route) are not routes.
    const routes = app.routes
      .filter((r) => r.method !== 'ALL' && !isMiddleware(findTargetHandler(r.handler)))
      .map((r) => ({ method: r.method.toLowerCase(), path: openApiPath(r.path), key: `${r.method} ${r.path}` }));
    expect(routes.map((r) => r.key)).toEqual(expect.arrayContaining(own));
    const missing = routes
      .filter((r) => !own.includes(r.key) && doc.paths[r.path]?.[r.method] === undefined)
      .map((r) => r.key);
    expect(missing).toEqual([]);
    const documented = Object.entries(doc.paths).flatMap(([path, ops]) =>
      Object.keys(ops).map((method) => `${method} ${path}`),
    );
    const routed = new Set(routes.map((r) => `${r.method} ${r.path}`));
    expect(documented.filter((op) => !routed.has(op))).toEqual([]);
    expect(documented.length).toBeGreaterThanOrEqual(32);
    for (const path of own) expect(doc.paths[path.split(' ')[1] ?? '']).toBeUndefined();
  });

  it('gives every operation a unique id, a tag, a summary, its security and its problems', () => {
    const ids = new Set<string>();
    for (const [path, ops] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(ops)) {
        const what = `${method} ${path}`;
        expect(op.operationId, what).toBeTruthy();
        expect(ids.has(op.operationId ?? ''), `${what}: duplicate operationId`).toBe(false);
        ids.add(op.operationId ?? '');
        expect(op.tags?.length, what).toBe(1);
        expect(op.summary, what).toBeTruthy();
        expect(op.security, what).toBeDefined();
        const scopes = new Set(op.security?.flatMap((s) => Object.values(s).flat()));
        if (scopes.size > 0) {
          // Each scope is accepted on an API key or a token, and named in the description.
          expect(op.security?.map((s) => Object.keys(s)[0]).sort(), what).toEqual(
            [...scopes].flatMap(() => ['bearerAuth', 'jwtBearer']).sort(),
          );
          for (const scope of scopes) expect(op.description, what).toContain(`\`${scope}\``);
          expect(Object.keys(op.responses), what).toEqual(expect.arrayContaining(['401', '403', '503']));
          expect(op.responses['401']?.headers?.['WWW-Authenticate']?.required, what).toBe(true);
        }
        for (const [status, res] of Object.entries(op.responses)) {
          if (Number(status) < 400) continue;
          // The exec envelope relays a function's failure as an envelope; everything else is problem+json.
          const problem = res.content?.['application/problem+json']?.schema;
          const envelope = res.content?.['application/json']?.schema;
          expect(problem ?? envelope, `${what} ${status}`).toEqual({
            $ref: `#/components/schemas/${problem ? 'Problem' : 'InvokeFunctionResponse'}`,
          });
          if (status === '429' || status === '503') {
            expect(res.headers?.['Retry-After']?.required, `${what} ${status}`).toBe(true);
          }
        }
      }
    }
  });

  it('uses NVCF’s component names where the shapes are NVCF’s, and every schema compiles', () => {
    expect(Object.keys(doc.components.schemas ?? {})).toEqual(
      expect.arrayContaining([
        'Problem',
        'FunctionDto',
        'FunctionResponse',
        'CreateFunctionRequest',
        'CreateFunctionResponse',
        'ListFunctionsResponse',
        'ListFunctionIdsResponse',
        'UpdateFunctionMetadataRequest',
        'UpdateSecretsRequest',
        'SecretDto',
        'FunctionDeploymentRequest',
        'GpuSpecificationDto',
        'DeploymentResponse',
        'FunctionDeploymentDto',
        'GetQueuesResponse',
        'QueueDto',
        'GetPositionInQueueResponse',
        'InvokeFunctionRequest',
        'InvokeFunctionResponse',
        'RequestHeaderDto',
        'CreateAssetRequest',
        'CreateAssetResponse',
        'ListAssetsResponse',
        'AssetResponse',
        'AssetDto',
        'HealthComponent',
        'AuthorizedPartyDto',
        'AuthorizedPartiesRequest',
        'PatchAuthorizedPartyRequest',
        'AuthorizedPartiesByFunctionDto',
        'AuthorizedPartiesResponse',
        'ListAuthorizedPartiesResponse',
      ]),
    );
    expect(Object.keys(doc.components.securitySchemes ?? {}).sort()).toEqual(['bearerAuth', 'jwtBearer']);
    // Every JSON body schema of every operation compiles, its $refs resolved inside the document.
    const openapi = createOpenApiValidator(doc);
    const create = doc.paths['/v2/nvcf/functions']?.post?.requestBody?.content['application/json']?.schema;
    expect(create).toEqual({ $ref: '#/components/schemas/CreateFunctionRequest' });
    expect(() =>
      openapi.requestBody('POST', '/v2/nvcf/functions', {
        name: 'fn',
        inferenceUrl: '/v2/models/simple/infer',
        models: [{ name: 'simple', version: '1', uri: 'model-repository://simple/1' }],
      }),
    ).not.toThrow();
    expect(() => openapi.requestBody('POST', '/v2/nvcf/functions', { name: '-bad', inferenceUrl: '' })).toThrow(
      /pattern/,
    );
    // NVCF's SecretDto constraints and updateSecrets' uniqueItems.
    const secrets = '/v2/nvcf/secrets/functions/{functionId}/versions/{versionId}';
    const secret = (name: string, value = 'v') => ({ name, value });
    expect(() => openapi.requestBody('PUT', secrets, { secrets: [secret('API_TOKEN')] })).not.toThrow();
    expect(() => openapi.requestBody('PUT', secrets, { secrets: [secret('_X')] })).toThrow(/pattern/);
    expect(() => openapi.requestBody('PUT', secrets, { secrets: [secret('X'.repeat(65))] })).toThrow(/64/);
    expect(() => openapi.requestBody('PUT', secrets, { secrets: [secret('X', 'v'.repeat(4097))] })).toThrow(/4096/);
    expect(() => openapi.requestBody('PUT', secrets, { secrets: [secret('A'), secret('A')] })).toThrow(/duplicate/);
  });

  it('carries what NVCF’s document requires of its DTOs: every required field, its type and its values', () => {
    // From NVCF's API reference (Cloud Functions management and invocation): required fields, and the type or the
    // values of the fields a client reads. Ours may add fields; they may not miss or widen these.
    const nvcf: Record<
      string,
      { required: string[]; types: Record<string, string>; values: Record<string, string[]> }
    > = {
      FunctionDto: {
        required: ['createdAt', 'functionType', 'healthUri', 'id', 'name', 'ncaId', 'status', 'versionId'],
        types: { healthUri: 'string', createdAt: 'string', activeInstances: 'array', resources: 'array' },
        values: {
          status: ['ACTIVE', 'DEPLOYING', 'ERROR', 'INACTIVE', 'DELETED'],
          apiBodyFormat: ['PREDICT_V2', 'CUSTOM'],
        },
      },
      FunctionDeploymentDto: {
        required: [
          'createdAt',
          'deploymentSpecifications',
          'functionId',
          'functionName',
          'functionStatus',
          'functionVersionId',
          'ncaId',
        ],
        types: { functionName: 'string', createdAt: 'string', healthInfo: 'array' },
        values: { functionStatus: ['ACTIVE', 'DEPLOYING', 'ERROR', 'INACTIVE', 'DELETED'] },
      },
      InvokeFunctionResponse: {
        required: [],
        // `response` is left out: NVCF's service embeds a JSON answer, which its clients read as an object.
        types: { responseReference: 'string', percentComplete: 'integer' },
        values: { status: ['errored', 'in-progress', 'fulfilled', 'pending-evaluation', 'rejected'] },
      },
      AuthorizedPartyDto: { required: ['ncaId'], types: { ncaId: 'string', clientId: 'string' }, values: {} },
      AuthorizedPartiesRequest: { required: ['authorizedParties'], types: { authorizedParties: 'array' }, values: {} },
      PatchAuthorizedPartyRequest: { required: ['authorizedParty'], types: {}, values: {} },
      AuthorizedPartiesByFunctionDto: {
        required: ['id', 'ncaId'],
        types: { id: 'string', ncaId: 'string', versionId: 'string', authorizedParties: 'array' },
        values: {},
      },
      AuthorizedPartiesResponse: { required: ['function'], types: {}, values: {} },
      ListAuthorizedPartiesResponse: { required: ['functions'], types: { functions: 'array' }, values: {} },
    };
    const Component = z.object({
      required: z.array(z.string()).default([]),
      properties: z.record(z.string(), z.object({ type: z.string().optional(), enum: z.array(z.string()).optional() })),
    });
    for (const [name, theirs] of Object.entries(nvcf)) {
      const ours = Component.parse(doc.components.schemas?.[name]);
      expect(ours.required, name).toEqual(expect.arrayContaining(theirs.required));
      for (const [field, type] of Object.entries(theirs.types)) {
        expect(ours.properties[field]?.type, `${name}.${field}`).toBe(type);
      }
      for (const [field, values] of Object.entries(theirs.values)) {
        expect([...(ours.properties[field]?.enum ?? [])].sort(), `${name}.${field}`).toEqual([...values].sort());
      }
    }
  });

  it('gives a validator that refuses answers the document does not describe', async () => {
    const openapi = createOpenApiValidator(doc);
    const path = '/v2/nvcf/pexec/status/4b1c3f0e-8d7a-4c1e-9a43-2f5e8f1b6c7d';
    const reqId = path.split('/').at(-1) ?? '';
    const json = (body: unknown, status: number, headers: Record<string, string> = {}) =>
      new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json', ...headers } });
    const pending = { 'nvcf-reqid': reqId, 'nvcf-status': 'in-progress', 'nvcf-percent-complete': '42' };
    await expect(
      openapi.response('GET', new Response(null, { status: 202, headers: pending }), { path }),
    ).resolves.toMatchObject({ operation: 'GET /v2/nvcf/pexec/status/{requestId}' });
    const { 'nvcf-percent-complete': _, ...noPercent } = pending;
    await expect(
      openapi.response('GET', new Response(null, { status: 202, headers: noPercent }), { path }),
    ).rejects.toThrow(/required header NVCF-PERCENT-COMPLETE/);
    const badPercent = { ...pending, 'nvcf-percent-complete': 'lots' };
    await expect(
      openapi.response('GET', new Response(null, { status: 202, headers: badPercent }), { path }),
    ).rejects.toThrow(/NVCF-PERCENT-COMPLETE/);
    await expect(openapi.response('GET', json({}, 418), { path })).rejects.toThrow(/status not documented/);
    await expect(
      openapi.response('GET', new Response('x', { status: 409 }), { path: '/v2/nvcf/functions' }),
    ).rejects.toThrow(/status not documented/);
    const problem = (body: unknown) =>
      new Response(JSON.stringify(body), { status: 404, headers: { 'content-type': 'application/problem+json' } });
    await expect(openapi.response('GET', problem({ title: 'Not Found', status: 404 }), { path })).rejects.toThrow(
      /must have required property 'type'/,
    );
    await expect(
      openapi.response('GET', json({ functions: [{ id: 1 }] }, 200), { path: '/v2/nvcf/functions' }),
    ).rejects.toThrow(/functions\/0/);
    await expect(
      openapi.response('GET', new Response('<html>', { status: 200, headers: { 'content-type': 'text/html' } }), {
        path: '/health',
      }),
    ).rejects.toThrow(/content type 'text\/html' not documented/);
    await expect(openapi.response('GET', json({}, 200), { path: '/v2/nvcf/nowhere' })).rejects.toThrow(/no operation/);
  });

  it('has NVCF’s authorized-accounts operations and the function lists’ `visibility`', () => {
    const ops = Object.values(doc.paths).flatMap((p) => Object.values(p).map((op) => op.operationId));
    for (const scope of ['ForAllVersions', 'ForSpecificVersion']) {
      for (const id of [
        'getAuthorizedParties',
        'createAuthorizedParties',
        'deleteAuthorizedParties',
        'addAuthorizedParty',
        'removeAuthorizedParty',
      ]) {
        expect(ops).toContain(`${id}${scope}`);
      }
    }
    const party = doc.components.schemas?.AuthorizedPartyDto as {
      properties: Record<string, { deprecated?: boolean }>;
    };
    expect(party.properties.clientId?.deprecated).toBe(true);
    for (const path of ['/v2/nvcf/functions', '/v2/nvcf/functions/ids']) {
      expect(doc.paths[path]?.get?.parameters?.find((p) => p.name === 'visibility')).toMatchObject({
        in: 'query',
        schema: {
          type: 'array',
          uniqueItems: true,
          items: { enum: ['authorized', 'private', 'public'] },
          default: ['authorized', 'private', 'public'],
        },
      });
    }
  });

  it('states the NVCF headers of an invocation', () => {
    const invoke = doc.paths['/v2/nvcf/pexec/functions/{functionId}']?.post;
    expect(invoke?.parameters?.map((p) => `${p.in} ${p.name}`)).toEqual([
      'path functionId',
      'header NVCF-POLL-SECONDS',
      'header NVCF-INPUT-ASSET-REFERENCES',
      'header Idempotency-Key',
      'header Inference-Header-Content-Length',
    ]);
    expect(Object.keys(invoke?.responses['200']?.content ?? {})).toEqual([
      'application/json',
      'text/event-stream',
      '*/*',
    ]);
    const required = (status: string) =>
      Object.entries(invoke?.responses[status]?.headers ?? {})
        .filter(([, h]) => h.required)
        .map(([name]) => name);
    expect(required('202')).toEqual(['NVCF-REQID', 'NVCF-STATUS', 'NVCF-PERCENT-COMPLETE']);
    expect(required('302')).toEqual(['Location', 'NVCF-REQID', 'NVCF-STATUS', 'NVCF-PERCENT-COMPLETE']);
    const status = doc.paths['/v2/nvcf/pexec/status/{requestId}'];
    expect(status?.get?.parameters?.map((p) => p.name)).toContain('Last-Event-ID');
    expect(Object.keys(status?.delete?.responses ?? {})).toEqual(
      expect.arrayContaining(['204', '400', '401', '403', '404', '409', '429', '503']),
    );
    expect(doc.paths['/health']?.get?.security).toEqual([]);
  });
});
