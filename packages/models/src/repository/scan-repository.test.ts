import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { scanModelRepository } from './scan-repository.ts';

let dir: string;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'models-scan-'));
});

afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Creates `<dir>/<path>/model.onnx` (content does not matter: scanning never opens it). */
async function version(path: string): Promise<void> {
  await mkdir(join(dir, path), { recursive: true });
  await writeFile(join(dir, path, 'model.onnx'), 'x');
}

const listed = async () => (await scanModelRepository(dir)).map((e) => `${e.name}/${e.version}`);

describe('scanModelRepository', () => {
  it('returns name, version and paths in Triton’s layout', async () => {
    await version('simple/1');
    expect(await scanModelRepository(dir)).toEqual([
      { name: 'simple', version: '1', modelPath: join(dir, 'simple/1/model.onnx'), modelDir: join(dir, 'simple') },
    ]);
  });

  it('sorts by name, then by numeric (not lexical) version', async () => {
    for (const p of ['zeta/1', 'alpha/10', 'alpha/9', 'alpha/100', 'Beta/2', 'alpha/18446744073709551617'])
      await version(p);
    expect(await listed()).toEqual([
      'Beta/2',
      'alpha/9',
      'alpha/10',
      'alpha/100',
      'alpha/18446744073709551617',
      'zeta/1',
    ]);
  });

  it('ignores non-numeric and leading-zero versions, and versions without model.onnx', async () => {
    for (const p of ['m/1', 'm/01', 'm/0', 'm/v2', 'm/2a', 'm/-3', 'm/1.5']) await version(p);
    await mkdir(join(dir, 'm/4'));
    await writeFile(join(dir, 'm/5'), 'a file, not a directory');
    expect(await listed()).toEqual(['m/1']);
  });

  it('skips models with no valid version and names outside [A-Za-z0-9_.-], and says why', async () => {
    await version('good.model-v_1/3');
    await version('bad name/1');
    await version('bad$name/1');
    await version('only-zero/0');
    await mkdir(join(dir, 'empty'));
    await writeFile(join(dir, 'README.md'), 'not a model');
    const skipped: string[] = [];
    const entries = await scanModelRepository(dir, {
      onSkipped: (s) => skipped.push(`${s.path.slice(dir.length + 1)}: ${s.reason}`),
    });
    expect(entries.map((e) => e.name)).toEqual(['good.model-v_1']);
    expect(skipped).toEqual([
      'bad name: model name has characters outside [A-Za-z0-9_.-]',
      'bad$name: model name has characters outside [A-Za-z0-9_.-]',
      'empty: no valid version directory',
      'only-zero: no valid version directory',
    ]);
  });

  it('lists the version directories of an identity-backend model, which hold no model file', async () => {
    await mkdir(join(dir, 'echo', '1'), { recursive: true });
    await mkdir(join(dir, 'echo', '2'), { recursive: true });
    await writeFile(join(dir, 'echo', 'config.pbtxt'), 'backend: "identity"\n');
    await mkdir(join(dir, 'plain', '1'), { recursive: true });
    await writeFile(join(dir, 'plain', 'config.pbtxt'), 'platform: "onnxruntime_onnx"\n# not the identity backend\n');
    const entries = await scanModelRepository(dir);
    expect(entries.map((e) => [e.name, e.version, e.backend])).toEqual([
      ['echo', '1', 'identity'],
      ['echo', '2', 'identity'],
    ]);
  });

  it('follows symlinked model and version directories', async () => {
    await version('real/1');
    await symlink(join(dir, 'real'), join(dir, 'linked'));
    await symlink(join(dir, 'real/1'), join(dir, 'real/2'));
    expect(await listed()).toEqual(['linked/1', 'linked/2', 'real/1', 'real/2']);
  });

  it('throws a clear error for a missing repository or a file', async () => {
    await expect(scanModelRepository(join(dir, 'nope'))).rejects.toThrow(
      `model repository '${join(dir, 'nope')}' cannot be read: it does not exist`,
    );
    await writeFile(join(dir, 'file'), '');
    await expect(scanModelRepository(join(dir, 'file'))).rejects.toThrow('is not a directory');
  });

  it('returns an empty list for an empty repository', async () => {
    expect(await scanModelRepository(dir)).toEqual([]);
  });
});
