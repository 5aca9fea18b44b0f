import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';

/** The parts of an OpenAPI 3.1 document the validator reads. */
export interface OpenApiDocument {
  openapi: string;
  info: { title: string; version: string };
  paths: Record<string, Record<string, OpenApiOperation>>;
  components: { schemas?: Record<string, unknown>; securitySchemes?: Record<string, unknown> };
}
export interface OpenApiOperation {
  operationId?: string;
  tags?: string[];
  summary?: string;
  description?: string;
  security?: Record<string, string[]>[];
  parameters?: { name: string; in: string; required?: boolean; schema?: Record<string, unknown> }[];
  requestBody?: { required?: boolean; content: Record<string, { schema?: unknown }> };
  responses: Record<string, OpenApiResponse>;
}
export interface OpenApiResponse {
  description: string;
  headers?: Record<string, { required?: boolean; schema?: Record<string, unknown> }>;
  content?: Record<string, { schema?: unknown }>;
}

/** A response read whole and found to match the document. */
export interface CheckedResponse {
  status: number;
  headers: Headers;
  text: string;
  /** The parsed body, when it was JSON. */
  json?: unknown;
  /** `METHOD /path/{template}` of the operation it matched. */
  operation: string;
}

export interface OpenApiValidator {
  readonly document: OpenApiDocument;
  /** The documented path template `path` falls under (the most literal one), or undefined. */
  template(method: string, path: string): string | undefined;
  /**
   * Reads `res` whole and checks it against the document: the operation exists, it documents the status, every
   * header it marks required is there and every documented header present has a valid value, the content type is
   * one it lists, and a JSON body matches that content's schema. An empty body passes only where the response has
   * no content or its description says "empty body". Throws an Error saying what differs.
   */
  response(method: string, res: Response, opts?: { path?: string }): Promise<CheckedResponse>;
  /** Checks a JSON request body against the operation's `application/json` request schema. */
  requestBody(method: string, path: string, body: unknown): void;
}

const DOC_ID = 'openapi.json';
const isJson = (type: string) => type === 'application/json' || type.endsWith('+json');

/** A JSON pointer into the document, as ajv resolves it. */
const pointer = (...segments: string[]) =>
  `${DOC_ID}#/${segments.map((s) => encodeURIComponent(s.replaceAll('~', '~0').replaceAll('/', '~1'))).join('/')}`;

function templateRegex(template: string): RegExp {
  const source = template
    .split('/')
    .map((segment) => (/^\{[^}]+\}$/.test(segment) ? '[^/]+' : segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
    .join('/');
  return new RegExp(`^${source}$`);
}

/**
 * Validates real answers against an OpenAPI 3.1 document with ajv (JSON Schema 2020-12): every `$ref` resolves
 * inside the document, so each schema is checked exactly as the document writes it.
 *
 * @example
 * const openapi = await fetchOpenApiValidator(gateway.url);
 * const { json } = await openapi.response('GET', await gfetch(`${gateway.url}/v2/nvcf/functions`));
 */
export function createOpenApiValidator(document: OpenApiDocument): OpenApiValidator {
  const ajv = new Ajv2020({ strict: true, allErrors: true });
  addFormats.default(ajv);
  // The document's two members that hold schemas; strict mode knows no other keyword at its top.
  ajv.addVocabulary(['paths', 'components']);
  ajv.addSchema({ $id: DOC_ID, paths: document.paths, components: document.components });
  // Header values are text: a header documented as an integer is coerced before it is checked.
  const headerAjv = new Ajv2020({ strict: true, coerceTypes: true });
  addFormats.default(headerAjv);
  const headerChecks = new Map<string, ValidateFunction>();

  const check = (ref: string, value: unknown, what: string) => {
    const validate = ajv.getSchema(ref);
    if (!validate) throw new Error(`${what}: no schema at ${ref}`);
    if (!validate(value)) {
      throw new Error(`${what}: ${ajv.errorsText(validate.errors)}\n${JSON.stringify(value).slice(0, 2000)}`);
    }
  };

  const template = (method: string, path: string) => {
    const candidates = Object.keys(document.paths)
      .filter((t) => document.paths[t]?.[method.toLowerCase()] && templateRegex(t).test(path))
      .sort((a, b) => (a.match(/\{/g)?.length ?? 0) - (b.match(/\{/g)?.length ?? 0));
    return candidates[0];
  };

  const operationOf = (method: string, path: string) => {
    const t = template(method, path);
    const op = t ? document.paths[t]?.[method.toLowerCase()] : undefined;
    if (!t || !op) throw new Error(`${method} ${path}: no operation in the document`);
    return { t, op };
  };

  function checkHeader(name: string, value: string, schema: Record<string, unknown>, what: string) {
    const key = JSON.stringify(schema);
    let validate = headerChecks.get(key);
    if (!validate) {
      validate = headerAjv.compile({ type: 'object', properties: { value: schema } });
      headerChecks.set(key, validate);
    }
    if (!validate({ value }))
      throw new Error(`${what}: header ${name}: '${value}' ${headerAjv.errorsText(validate.errors)}`);
  }

  return {
    document,
    template,
    async response(method, res, opts = {}) {
      const path = opts.path ?? new URL(res.url).pathname;
      const { t, op } = operationOf(method, path);
      const text = await res.text();
      const operation = `${method.toUpperCase()} ${t}`;
      const what = `${operation} → ${res.status}`;
      const documented = op.responses[String(res.status)];
      if (!documented) throw new Error(`${what}: status not documented (${text.slice(0, 500)})`);
      for (const [name, header] of Object.entries(documented.headers ?? {})) {
        const value = res.headers.get(name);
        if (value === null) {
          if (header.required) throw new Error(`${what}: required header ${name} missing`);
          continue;
        }
        if (header.schema) checkHeader(name, value, header.schema, what);
      }
      const result: CheckedResponse = { status: res.status, headers: res.headers, text, operation };
      if (text === '') {
        if (documented.content && !/empty body/i.test(documented.description)) {
          throw new Error(`${what}: empty body, but the document gives it content`);
        }
        return result;
      }
      const type = (res.headers.get('content-type') ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
      const types = Object.keys(documented.content ?? {});
      const media =
        types.find((m) => m === type) ??
        types.find((m) => m === `${type.split('/')[0]}/*`) ??
        types.find((m) => m === '*/*');
      if (!media) throw new Error(`${what}: content type '${type}' not documented (documented: ${types.join(', ')})`);
      if (isJson(type)) {
        let json: unknown;
        try {
          json = JSON.parse(text);
        } catch {
          throw new Error(`${what}: '${type}' body is not JSON: ${text.slice(0, 200)}`);
        }
        result.json = json;
        if (documented.content?.[media]?.schema !== undefined) {
          check(
            pointer('paths', t, method.toLowerCase(), 'responses', String(res.status), 'content', media, 'schema'),
            json,
            what,
          );
        }
      }
      return result;
    },
    requestBody(method, path, body) {
      const { t, op } = operationOf(method, path);
      if (op.requestBody?.content['application/json']?.schema === undefined) {
        throw new Error(`${method} ${t}: no JSON request body documented`);
      }
      check(
        pointer('paths', t, method.toLowerCase(), 'requestBody', 'content', 'application/json', 'schema'),
        body,
        `${method.toUpperCase()} ${t} request body`,
      );
    },
  };
}

/** The validator of the document a running gateway serves at `/openapi.json` (no credential). */
export async function fetchOpenApiValidator(baseUrl: string): Promise<OpenApiValidator> {
  const res = await fetch(`${baseUrl}/openapi.json`);
  if (res.status !== 200) throw new Error(`GET /openapi.json answered ${res.status}`);
  return createOpenApiValidator((await res.json()) as OpenApiDocument);
}
