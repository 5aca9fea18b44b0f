import { type InvocationResult, type ResultObjectIndex, resultObjectKey, successResult } from '@nvcf/queue';
import type { ObjectStore } from '@nvcf/storage';
import { type AsyncZippable, zip } from 'fflate';

/** Deflated off the event loop: fflate's asynchronous zip runs in a worker thread, and a large answer is megabytes. */
function zipFiles(files: AsyncZippable): Promise<Uint8Array> {
  return new Promise((resolve, reject) => {
    zip(files, (err, data) => (err ? reject(err) : resolve(data)));
  });
}

/**
 * NVCF returns a response over the direct limit (5 MiB) as a 302 to a zip holding `<reqId>.response`
 * (NVCF behaviour: results). The worker stores that zip; the gateway signs the URL it redirects to, and
 * deletes the zip once its time is up.
 */
export function createLargeResultStore(deps: {
  objects: ObjectStore;
  index: ResultObjectIndex;
  maxDirectBytes: number;
  ttlSeconds: number;
}) {
  return {
    /**
     * `artefacts`: the files a container function wrote to its large-output dir (NVCF worker: any such file
     * makes the answer a zip, beside `<reqId>.response`, at their paths relative to that dir).
     */
    async settle(
      requestId: string,
      result: InvocationResult,
      artefacts: readonly { name: string; body: Buffer }[] = [],
    ): Promise<InvocationResult> {
      // A failure is never stored away; a container's own 3xx never reaches here (container-processor.ts).
      if (!result.ok || (result.body.length <= deps.maxDirectBytes && artefacts.length === 0)) return result;
      const files: AsyncZippable = { [`${requestId}.response`]: result.body };
      for (const file of artefacts) files[file.name] = file.body;
      const key = resultObjectKey(requestId);
      const archive = await zipFiles(files);
      await deps.objects.put(key, Buffer.from(archive.buffer, archive.byteOffset, archive.byteLength), {
        contentType: 'application/zip',
      });
      await deps.index.track(key, deps.ttlSeconds);
      return successResult({ status: 302, contentType: 'application/zip', body: Buffer.alloc(0), objectKey: key });
    },
  };
}
