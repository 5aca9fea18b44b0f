/**
 * Test helper (only *.int.test.ts import it): the client side of Triton's shared memory examples, in a process of
 * its own as a Triton client would be.
 */
import { execFileSync } from 'node:child_process';

/** The file POSIX shm_open makes for a key on Linux (glibc drops the leading slashes). */
export const shmFile = (key: string) => `/dev/shm/${key.replace(/^\/+/, '')}`;

/**
 * Creates two objects in a separate process: `inKey` with INPUT0 (INT32) at 0 and INPUT1 at 64, and a zeroed
 * 128-byte `outKey` for the outputs.
 */
export function clientCreatesRegions(
  inKey: string,
  outKey: string,
  input0: ArrayLike<number>,
  input1: ArrayLike<number>,
) {
  const script = `
    const fs = require('node:fs');
    const [inFile, outFile, a, b] = process.argv.slice(1);
    const bytes = Buffer.alloc(128);
    JSON.parse(a).forEach((v, i) => bytes.writeInt32LE(v, i * 4));
    JSON.parse(b).forEach((v, i) => bytes.writeInt32LE(v, 64 + i * 4));
    fs.writeFileSync(inFile, bytes, { mode: 0o600 });
    fs.writeFileSync(outFile, Buffer.alloc(128), { mode: 0o600 });
  `;
  const list = (values: ArrayLike<number>) => JSON.stringify(Array.from(values));
  execFileSync(process.execPath, ['-e', script, shmFile(inKey), shmFile(outKey), list(input0), list(input1)]);
}
