import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { buildModel, OnnxElemType, writeModelVersion } from '@nvcf/models';

export const SLOW_WIDTH = 1024;

/**
 * A model whose run time grows with the batch: `layers` MatMuls by the identity matrix, so the output
 * equals the input. Tests use it to have a job really running while they kill or stop its worker.
 */
export async function writeSlowModel(repositoryDir: string, layers = 1024): Promise<void> {
  const eye = new Uint8Array(SLOW_WIDTH * SLOW_WIDTH * 4);
  const view = new DataView(eye.buffer);
  for (let i = 0; i < SLOW_WIDTH; i++) view.setFloat32((i * SLOW_WIDTH + i) * 4, 1, true);
  const nodes = Array.from({ length: layers }, (_, i) => ({
    opType: 'MatMul',
    inputs: [i === 0 ? 'INPUT0' : `h${i}`, 'EYE'],
    outputs: [i === layers - 1 ? 'OUTPUT0' : `h${i + 1}`],
  }));
  const model = buildModel({
    graphName: 'slow',
    inputs: [{ name: 'INPUT0', elemType: OnnxElemType.FLOAT, shape: ['batch', SLOW_WIDTH] }],
    outputs: [{ name: 'OUTPUT0', elemType: OnnxElemType.FLOAT, shape: ['batch', SLOW_WIDTH] }],
    initializers: [{ name: 'EYE', elemType: OnnxElemType.FLOAT, dims: [SLOW_WIDTH, SLOW_WIDTH], rawData: eye }],
    nodes,
  });
  const dir = await writeModelVersion(repositoryDir, 'slow', model);
  // Batches of up to 256 rows (auto-complete alone would allow 4).
  await writeFile(join(dir, 'config.pbtxt'), 'max_batch_size: 256\n');
}

/** A KServe V2 request for the slow model; `rows` scales how long it runs. */
export function slowRequest(rows: number): object {
  return {
    inputs: [
      {
        name: 'INPUT0',
        datatype: 'FP32',
        shape: [rows, SLOW_WIDTH],
        data: Array.from({ length: rows * SLOW_WIDTH }, (_, i) => i % 7),
      },
    ],
  };
}
