import { type DescribeRouteOptions, describeRoute } from 'hono-openapi';

/**
 * The Triton v1 routes' `describeRoute` annotations (TRTIS 1.x API): every answer carries `NV-Status`, failures
 * are 400 with the message as plain text, and messages come as protobuf text, wire format or proto3 JSON.
 */

const NV_STATUS = {
  'NV-Status': {
    description: 'The RequestStatus (code, message, server id, request id) in protobuf text format, on one line.',
    schema: { type: 'string' },
  },
} as const;

const text = (description: string) => ({ 'text/plain': { schema: { type: 'string', description } as const } });

/** A v1 failure: 400, its code in NV-Status. */
const FAILED = {
  400: {
    description: 'Failed: the code is in NV-Status, the message is the body.',
    headers: NV_STATUS,
    content: text('The message.'),
  },
};

type Parameter = NonNullable<DescribeRouteOptions['parameters']>[number];

const path = (name: string, description: string, values?: readonly string[]): Parameter => ({
  name,
  in: 'path',
  required: true,
  description,
  schema: values ? { type: 'string', enum: [...values] } : { type: 'string' },
});

const format = (values: readonly string[]): Parameter => ({
  name: 'format',
  in: 'query',
  required: false,
  description: 'The body format; without it, JSON when `Accept` names application/json (where allowed), else text.',
  schema: { type: 'string', enum: [...values] },
});

/** A message answered in the format asked for. */
const message = (type: string, formats: readonly string[]) => ({
  description: `The ${type}.`,
  headers: NV_STATUS,
  content: {
    'text/plain': { schema: { type: 'string', description: `${type} in protobuf text format.` } as const },
    'application/octet-stream': {
      schema: {
        type: 'string',
        contentMediaType: 'application/octet-stream',
        description: `${type}, wire format.`,
      } as const,
    },
    ...(formats.includes('json')
      ? { 'application/json': { schema: { type: 'object', description: `${type} in proto3 JSON.` } as const } }
      : {}),
  },
});

const v1 = (spec: DescribeRouteOptions) => describeRoute({ tags: ['Triton v1'], ...spec });

export const v1Health = v1({
  summary: 'Health (v1)',
  parameters: [path('mode', 'Which probe.', ['live', 'ready'])],
  responses: {
    200: { description: 'Live / ready. Empty body.', headers: NV_STATUS },
    400: {
      description: 'Not live / not ready (NV-Status SUCCESS), or an unknown mode. Empty body.',
      headers: NV_STATUS,
    },
  },
});

export const v1Status = (model: boolean) =>
  v1({
    summary: model ? 'Model status (v1)' : 'Server status (v1)',
    description:
      "The ServerStatus: the server's and each model's (or one model's) configuration, state and statistics.",
    parameters: [...(model ? [path('model', "The model's name.")] : []), format(['text', 'binary', 'json'])],
    responses: { 200: message('ServerStatus', ['json']), ...FAILED },
  });

export const v1Infer = (version: boolean) =>
  v1({
    summary: 'Inference (v1)',
    description:
      'The body is each input’s raw bytes, in the order of the NV-InferRequest header. The answer is each raw ' +
      'output’s bytes in header order, then the InferResponseHeader again (text, or wire format with `format=binary`).',
    parameters: [
      path('model', "The model's name."),
      ...(version ? [path('version', 'A version number; -1 for the latest ready one.')] : []),
      {
        name: 'NV-InferRequest',
        in: 'header',
        required: true,
        description: 'The InferRequestHeader (batch size, inputs, outputs) in protobuf text format.',
        schema: { type: 'string' },
      },
      format(['text', 'binary']),
    ],
    requestBody: {
      required: true,
      content: {
        'application/octet-stream': { schema: { type: 'string', contentMediaType: 'application/octet-stream' } },
      },
    },
    responses: {
      200: {
        description: 'The outputs.',
        headers: {
          ...NV_STATUS,
          'NV-InferResponse': {
            description: 'The InferResponseHeader in protobuf text format, on one line.',
            schema: { type: 'string' },
          },
        },
        content: {
          'application/octet-stream': { schema: { type: 'string', contentMediaType: 'application/octet-stream' } },
        },
      },
      ...FAILED,
    },
  });

export const v1ModelControl = v1({
  summary: 'Load or unload a model (v1)',
  parameters: [path('action', 'What to do.', ['load', 'unload']), path('model', "The model's name.")],
  responses: { 200: { description: 'Done. Empty body.', headers: NV_STATUS }, ...FAILED },
});

export const v1RepositoryIndex = v1({
  summary: 'Repository index (v1)',
  parameters: [format(['text', 'binary', 'json'])],
  responses: { 200: message('ModelRepositoryIndex', ['json']), ...FAILED },
});
