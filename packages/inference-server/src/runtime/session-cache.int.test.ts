import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateExampleRepository, type ModelVersionEntry, scanModelRepository } from '@nvcf/models';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { SessionCache, type SessionCacheOptions } from './session-cache.ts';

type LogLine = { level: 'info' | 'warn'; obj: Record<string, unknown>; msg?: string };

function capturingLogger() {
  const lines: LogLine[] = [];
  return {
    lines,
    info: (obj: object, msg?: string) => lines.push({ level: 'info', obj: obj as LogLine['obj'], msg }),
    warn: (obj: object, msg?: string) => lines.push({ level: 'warn', obj: obj as LogLine['obj'], msg }),
  };
}

let dir: string;
let simple: ModelVersionEntry;
let classifier: ModelVersionEntry;
const caches: SessionCache[] = [];

function newCache(overrides: Partial<SessionCacheOptions> = {}) {
  const logger = capturingLogger();
  const cache = new SessionCache({
    executionProviders: ['cpu'],
    intraOpNumThreads: 1,
    interOpNumThreads: 1,
    logger,
    ...overrides,
  });
  caches.push(cache);
  return { cache, logger };
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'models-cache-'));
  await generateExampleRepository(dir);
  [classifier, simple] = (await scanModelRepository(dir)) as [ModelVersionEntry, ModelVersionEntry];
});

afterEach(async () => {
  await Promise.all(caches.splice(0).map((c) => c.close()));
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('SessionCache', () => {
  it('says once which configured providers this machine can start, then loads on those only', async () => {
    // CI machines have no CUDA provider: it is found missing once, not tried (and logged) at every load.
    const { cache, logger } = newCache({ executionProviders: ['cuda', 'cpu'] });
    const model = await cache.load(simple);
    expect(model.provider).toBe('cpu');
    await cache.load(classifier);
    expect(logger.lines).toEqual([
      {
        level: 'info',
        obj: { providers: ['cpu'], unavailable: { cuda: expect.any(String) } },
        msg: 'execution providers: cpu',
      },
      { level: 'info', obj: { model: 'simple', version: '1', provider: 'cpu' }, msg: 'model loaded' },
      { level: 'info', obj: { model: 'classifier', version: '1', provider: 'cpu' }, msg: 'model loaded' },
    ]);
  });

  it('fails with each provider’s reason when none of the configured ones can start here', async () => {
    const { cache } = newCache({ executionProviders: ['cuda'] });
    await expect(cache.load(simple)).rejects.toMatchObject({
      code: 'INVALID_ARGUMENT',
      message: expect.stringMatching(
        /^failed to load 'simple' version 1: no configured execution provider can start here \(cuda: /,
      ),
    });
    expect(cache.get('simple', '1')).toBeUndefined();
  });

  it('rejects unknown provider names and bad thread counts when constructed', () => {
    expect(() => newCache({ executionProviders: ['cdua', 'cpu'] })).toThrow("unknown execution provider 'cdua'");
    expect(() => newCache({ executionProviders: [] })).toThrow('at least one provider');
    expect(() => newCache({ intraOpNumThreads: -1 })).toThrow('intraOpNumThreads');
  });

  it('shares one load between concurrent callers and keeps one session per version', async () => {
    const { cache, logger } = newCache();
    const [a, b] = await Promise.all([cache.load(simple), cache.load(simple)]);
    expect(a).toBe(b);
    expect(await cache.load(simple)).toBe(a);
    expect(cache.get('simple', '1')).toBe(a);
    expect(logger.lines.filter((l) => l.msg === 'model loaded')).toHaveLength(1);
  });

  it('lists, unloads and closes', async () => {
    const { cache } = newCache();
    await Promise.all([cache.load(simple), cache.load(classifier)]);
    expect(cache.list().map((m) => m.name)).toEqual(['classifier', 'simple']);
    expect(await cache.unload('simple', '1')).toBe(true);
    expect(await cache.unload('simple', '1')).toBe(false);
    expect(cache.get('simple', '1')).toBeUndefined();
    expect(cache.list().map((m) => m.name)).toEqual(['classifier']);
    await cache.close();
    expect(cache.list()).toEqual([]);
    await expect(cache.load(simple)).rejects.toMatchObject({ code: 'UNAVAILABLE' });
  });

  it('can retry a model whose first load failed', async () => {
    const broken = join(dir, 'broken.onnx');
    await writeFile(broken, 'not a model');
    const entry = { name: 'broken', version: '1', modelPath: broken, modelDir: dir };
    const { cache } = newCache();
    await expect(cache.load(entry)).rejects.toThrow("failed to load 'broken' version 1");
    await expect(cache.load({ ...entry, modelPath: simple.modelPath })).resolves.toMatchObject({ name: 'broken' });
  });

  it('runs a version on as many instances (threads) as asked, and scales back down', async () => {
    const { cache } = newCache();
    const model = await cache.load(simple);
    expect(model.instances).toBe(1);
    expect(await cache.scale('simple', '1', 3)).toBe(true);
    expect(model.instances).toBe(3);
    const row = (v: number) => ({
      name: '',
      datatype: 'INT32' as const,
      shape: [1, 16],
      data: new Int32Array(16).fill(v),
    });
    const runs = await Promise.all(
      [1, 2, 3, 4, 5, 6].map((v) =>
        model.run(
          [
            { ...row(v), name: 'INPUT0' },
            { ...row(1), name: 'INPUT1' },
          ],
          ['OUTPUT0'],
          { moveInputs: true },
        ),
      ),
    );
    expect(runs.map(([sum]) => sum?.data)).toEqual([2, 3, 4, 5, 6, 7].map((v) => new Int32Array(16).fill(v)));
    await cache.scale('simple', '1', 1);
    expect(model.instances).toBe(1);
    expect(await cache.scale('absent', '1', 2)).toBe(false);
  });

  it('copies inputs the caller keeps, and moves those it gives away', async () => {
    const { cache } = newCache();
    const model = await cache.load(simple);
    const kept = new Int32Array(16).fill(2);
    const given = new Int32Array(16).fill(3);
    const inputs = (a: Int32Array, b: Int32Array) => [
      { name: 'INPUT0', datatype: 'INT32' as const, shape: [1, 16], data: a },
      { name: 'INPUT1', datatype: 'INT32' as const, shape: [1, 16], data: b },
    ];
    await model.run(inputs(kept, new Int32Array(16)), ['OUTPUT0']);
    expect(kept[0]).toBe(2);
    const [sum] = await model.run(inputs(given, new Int32Array(16).fill(1)), ['OUTPUT0'], { moveInputs: true });
    expect(sum?.data).toEqual(new Int32Array(16).fill(4));
    expect(given.length).toBe(0);
  });
});
