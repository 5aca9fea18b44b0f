import { join } from 'node:path';
import { buildClassifierModel, CLASSIFIER_CONFIG_PBTXT, CLASSIFIER_LABELS } from './classifier.ts';
import { writeDensenetModel } from './densenet.ts';
import { writeGenerativeModel } from './generative.ts';
import { writeIdentityModels } from './identity.ts';
import { buildSimpleModel, SIMPLE_CONFIG_PBTXT } from './simple.ts';
import { writeTritonExampleModels } from './triton-examples.ts';
import { writeFileAtomic, writeModelVersion } from './write-model.ts';

export interface GenerateOptions {
  /** Also write the `identity_<dtype>` test models. Default false. */
  includeIdentity?: boolean;
  /** Also write `generative`, the byte-level model the streaming (SSE) path runs token by token. Default false. */
  includeGenerative?: boolean;
  /** Also write `densenet_onnx`, the image classifier with DenseNet's I/O (a model where compute matters). */
  includeDensenet?: boolean;
  /** Also write more of Triton's examples: `simple_int8`, `simple_string`, `custom_identity_int32`. */
  includeTritonExamples?: boolean;
}

/**
 * Writes the example models in Triton's layout: `<dir>/simple/1/model.onnx` with `simple/config.pbtxt`, and
 * `<dir>/classifier/1/model.onnx` with its config and `labels.txt`. Idempotent: every run writes the same bytes over whatever is there.
 *
 * @example
 * await generateExampleRepository('./model-repository');
 */
export async function generateExampleRepository(dir: string, opts: GenerateOptions = {}): Promise<void> {
  const simpleDir = await writeModelVersion(dir, 'simple', buildSimpleModel());
  await writeFileAtomic(join(simpleDir, 'config.pbtxt'), SIMPLE_CONFIG_PBTXT);
  const classifierDir = await writeModelVersion(dir, 'classifier', buildClassifierModel());
  await writeFileAtomic(join(classifierDir, 'config.pbtxt'), CLASSIFIER_CONFIG_PBTXT);
  await writeFileAtomic(join(classifierDir, 'labels.txt'), `${CLASSIFIER_LABELS.join('\n')}\n`);
  if (opts.includeGenerative) await writeGenerativeModel(dir);
  if (opts.includeIdentity) await writeIdentityModels(dir);
  if (opts.includeDensenet) await writeDensenetModel(dir);
  if (opts.includeTritonExamples) await writeTritonExampleModels(dir);
}
