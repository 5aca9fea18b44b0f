import { v5 as uuidv5 } from 'uuid';

/** Fixed namespace: a model's function id is the same on every start and every worker. */
const MODEL_FUNCTION_NAMESPACE = '6f1c3b5e-8d1a-4f8e-9a57-2d4c2b9e7a10';

/**
 * The function a worker publishes a repository model as (its `model-repository://<name>/<version>`): the
 * gateway finds the publisher of a model a new function names by these ids, and checks the caller may use it.
 *
 * @example
 * modelFunctionId('simple'); // the same uuid on every worker and every start
 */
export const modelFunctionId = (model: string) => uuidv5(`onnx-model:${model}`, MODEL_FUNCTION_NAMESPACE);
/** The version of {@link modelFunctionId} that publishes one version of the model. */
export const modelVersionId = (model: string, version: string) =>
  uuidv5(`onnx-model:${model}:${version}`, MODEL_FUNCTION_NAMESPACE);
