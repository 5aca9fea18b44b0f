import { InferRequestJson, InferResponseJson, InferTensorJson, JsonParameters } from '@nvcf/protocol';
import { z } from 'zod';

/**
 * The Open Inference Protocol (KServe V2) REST shapes for this server's OpenAPI document, under the component names
 * of the published spec (Open Inference Protocol REST, https://github.com/kserve/open-inference-protocol:
 * specification/protocol/inference_rest.md and its open_inference_rest.yaml). A `.meta({ id })` makes a schema a
 * component (`#/components/schemas/<id>`). The infer shapes extend the zod schemas the infer route parses with
 * (`InferRequestJson`, `InferResponseJson`), so a field added there shows up here; the routes never parse with
 * these, so documenting changes no error text.
 */

/** Free-form parameters, as on requests, tensors and responses. */
export const Parameters = JsonParameters.meta({
  id: 'parameters',
  description:
    'Free-form parameters. Triton reads some: `binary_data_output`, `sequence_id`, `priority`, `timeout` on a ' +
    'request; `binary_data`, `classification` on a requested output; `binary_data_size` and ' +
    '`shared_memory_region` / `shared_memory_byte_size` / `shared_memory_offset` on a tensor.',
});

type TensorDataJson = (TensorDataJson | number | string | boolean)[];

/** A tensor's elements: flat in row-major order, or nested by the shape's dimensions. */
const TensorData: z.ZodType<TensorDataJson> = z
  .lazy(() => z.array(z.union([TensorData, z.number(), z.string(), z.boolean()])))
  .meta({
    id: 'tensor_data',
    description:
      'Row-major elements, flat or nested by dimension. BYTES elements are strings; FP16/FP32/FP64 may be ' +
      '"NaN", "Infinity" or "-Infinity" in responses.',
  });

const Shape = z.array(z.int());

/** A model's declared input or output. */
const MetadataTensor = z
  .object({ name: z.string(), datatype: z.string(), shape: Shape })
  .meta({ id: 'metadata_tensor', description: 'A declared input or output; -1 marks a variable dimension.' });

export const MetadataServerResponse = z
  .object({ name: z.string(), version: z.string(), extensions: z.array(z.string()) })
  .meta({ id: 'metadata_server_response' });

export const MetadataModelResponse = z
  .object({
    name: z.string(),
    versions: z.array(z.string()).optional(),
    platform: z.string(),
    inputs: z.array(MetadataTensor),
    outputs: z.array(MetadataTensor),
    parameters: z
      .record(z.string(), z.string())
      .optional()
      .describe('Facts about the model that the standard fields cannot say.'),
  })
  .meta({ id: 'metadata_model_response' });

/** An input: its data inline, in the binary part, or in a shared memory region. */
const RequestInput = InferTensorJson.extend({
  shape: Shape,
  parameters: Parameters.optional(),
  data: TensorData.optional(),
}).meta({
  id: 'request_input',
  description:
    '`data` is required unless `parameters` puts the data in the binary part (`binary_data_size`) or a shared ' +
    'memory region.',
});

const RequestOutput = z
  .object({ name: z.string().min(1), parameters: Parameters.optional() })
  .meta({ id: 'request_output' });

export const InferenceRequest = InferRequestJson.extend({
  parameters: Parameters.optional(),
  inputs: z.array(RequestInput).min(1),
  outputs: z.array(RequestOutput).optional().describe('The outputs to answer; all of them when absent.'),
}).meta({ id: 'inference_request' });

const ResponseOutput = InferTensorJson.extend({
  shape: Shape,
  parameters: Parameters.optional(),
  data: TensorData.optional(),
}).meta({
  id: 'response_output',
  description:
    '`data` is absent when the output travels in the binary part (`parameters.binary_data_size`) or a shared ' +
    'memory region.',
});

export const InferenceResponse = InferResponseJson.extend({
  parameters: Parameters.optional(),
  outputs: z.array(ResponseOutput),
}).meta({ id: 'inference_response' });

const errorObject = (id: string) =>
  z.object({ error: z.string().describe('What went wrong, in Triton’s words.') }).meta({ id });

/** `{"error": "…"}`, the KServe V2 error shape, under each name the spec gives it. */
export const MetadataServerErrorResponse = errorObject('metadata_server_error_response');
export const MetadataModelErrorResponse = errorObject('metadata_model_error_response');
export const InferenceErrorResponse = errorObject('inference_error_response');
/** The same shape for Triton's extensions, which the spec does not name. */
export const ErrorResponse = errorObject('error_response');
