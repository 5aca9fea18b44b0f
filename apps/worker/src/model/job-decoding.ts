import {
  decodeInferCall,
  type InferBody,
  type InferCall,
  type InferenceCore,
  type ModelRef,
} from '@nvcf/inference-server';
import type { ObjectStore } from '@nvcf/storage';
import { bindAssetInputs } from './asset-inputs.ts';
import type { ModelJob } from './job-input.ts';

export interface JobDecodingDeps {
  core: InferenceCore;
  model: ModelRef;
  maxTensorElements: number;
  /** Where asset-borne input tensors are read from. */
  objects: ObjectStore;
}

/** Decodes a job's body into the model's call; every model runner decodes KServe bodies with it. */
export type JobDecoder = (job: ModelJob) => Promise<InferCall>;

/** The job's body in the forms `/infer` takes, with inputs named by asset read from the object store. */
export function createJobDecoder(deps: JobDecodingDeps): JobDecoder {
  const { core, model, maxTensorElements } = deps;
  return async (job) => {
    if (job.input.kind === 'kserve') {
      const parts = { header: job.input.header, binary: job.input.binary };
      return decodeInferCall(core, model, parts, undefined, maxTensorElements);
    }
    let body: InferBody = job.input.kind === 'json' ? { json: job.input.value } : job.input.bytes;
    let header = job.headers['inference-header-content-length'];
    if (job.input.kind === 'json') {
      const referenced = new Set(job.assetIds ?? []);
      const bound = await bindAssetInputs(job.input.value, referenced, deps.objects, {
        maxElements: maxTensorElements,
      });
      if (bound) {
        body = bound.body;
        header = String(bound.headerLength);
      }
    }
    return decodeInferCall(core, model, body, header, maxTensorElements);
  };
}
