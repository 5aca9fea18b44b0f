import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { text } from 'node:stream/consumers';
import { AppError } from '@nvcf/protocol';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createLocalDirStore, objectKeySegments } from './local-dir-store.ts';
import type { ObjectStore } from './object-store.ts';

let dir: string;
let store: ObjectStore;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'nvcf-store-'));
  store = createLocalDirStore(dir);
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const codeOf = async (p: Promise<unknown>) => {
  try {
    await p;
    return 'ok';
  } catch (err) {
    return err instanceof AppError ? err.code : String(err);
  }
};

/** Every file under the store, dot-files included (sidecars, leftovers of a failed put). */
const allFiles = async () => (await readdir(dir, { recursive: true, withFileTypes: true })).filter((e) => e.isFile());

function chunks(sizes: number[]): Readable {
  return Readable.from(sizes.map((n, i) => Buffer.alloc(n, 97 + i)));
}

describe('local directory store', () => {
  it('stores, reads, replaces and deletes an object with its metadata', async () => {
    expect(await store.exists('assets/a')).toBe(false);
    expect(await store.get('assets/a')).toBeUndefined();
    const meta = { contentType: 'image/png', metadata: { 'nvcf-asset-description': 'cat picture' } };
    expect(await store.put('assets/a', Buffer.from('hello'), meta)).toEqual({ size: 5 });
    expect(await store.exists('assets/a')).toBe(true);
    expect(await readFile(join(dir, 'assets', 'a'), 'utf8')).toBe('hello');

    const got = await store.get('assets/a');
    expect(got).toMatchObject({ size: 5, contentType: 'image/png', metadata: meta.metadata });
    expect(await text(got!.body)).toBe('hello');

    expect(
      await store.put('assets/a', Readable.from([Buffer.from('second '), Buffer.from('version')]), {
        contentType: 'text/plain',
      }),
    ).toEqual({ size: 14 });
    const again = await store.get('assets/a');
    expect(again).toMatchObject({ size: 14, contentType: 'text/plain', metadata: {} });
    expect(await text(again!.body)).toBe('second version');

    await store.delete('assets/a');
    expect(await store.exists('assets/a')).toBe(false);
    expect(await store.get('assets/a')).toBeUndefined();
    expect(await allFiles()).toEqual([]);
    await store.delete('assets/a'); // deleting nothing is fine
  });

  it('stores empty objects', async () => {
    expect(await store.put('e', Readable.from([]), { contentType: 'application/octet-stream' })).toEqual({ size: 0 });
    const got = await store.get('e');
    expect(got?.size).toBe(0);
    expect(await text(got!.body)).toBe('');
  });

  it('a reader that opened the old object keeps reading it while a put replaces it', async () => {
    await store.put('k', Buffer.alloc(100_000, 1), { contentType: 'a/b' });
    const old = await store.get('k');
    await store.put('k', Buffer.from('new'), { contentType: 'a/b' });
    const bytes = Buffer.concat(await old!.body.toArray());
    expect(bytes.length).toBe(100_000);
    expect(bytes.every((b) => b === 1)).toBe(true);
  });

  it('refuses a streamed body past the limit and leaves nothing behind, nor touches the old object', async () => {
    const limited = createLocalDirStore(dir, { maxBytes: 1000 });
    await limited.put('x/y', Buffer.from('old'), { contentType: 'text/plain' });
    const source = chunks([400, 400, 400, 400]);
    expect(await codeOf(limited.put('x/y', source, { contentType: 'text/plain' }))).toBe('PAYLOAD_TOO_LARGE');
    expect(source.destroyed).toBe(true);
    expect(await codeOf(limited.put('x/z', chunks([1001]), { contentType: 'text/plain' }))).toBe('PAYLOAD_TOO_LARGE');
    expect(await codeOf(limited.put('x/z', Buffer.alloc(1001), { contentType: 'text/plain' }))).toBe(
      'PAYLOAD_TOO_LARGE',
    );
    // The per-put limit overrides the store's.
    expect(await codeOf(limited.put('x/z', chunks([50]), { contentType: 'a/b' }, { maxBytes: 10 }))).toBe(
      'PAYLOAD_TOO_LARGE',
    );
    expect(await limited.put('x/w', chunks([600]), { contentType: 'a/b' }, { maxBytes: 2000 })).toEqual({ size: 600 });
    expect(await limited.put('x/v', chunks([500, 500]), { contentType: 'a/b' })).toEqual({ size: 1000 });
    expect(await limited.exists('x/z')).toBe(false);
    expect(await text((await limited.get('x/y'))!.body)).toBe('old');
    const names = (await allFiles()).map((e) => e.name).sort();
    expect(names).toEqual(['.v.meta.json', '.w.meta.json', '.y.meta.json', 'v', 'w', 'y']);
  });

  it('a failing source stream leaves no temporary file', async () => {
    const failing = new Readable({
      read() {
        this.push(Buffer.alloc(10));
        this.destroy(new Error('client went away'));
      },
    });
    expect(await codeOf(store.put('f', failing, { contentType: 'a/b' }))).toMatch(/client went away/);
    expect(await allFiles()).toEqual([]);
  });

  it('validates keys so that nothing escapes the directory', async () => {
    for (const key of [
      '',
      '/abs',
      '../x',
      'a/../../x',
      'a/./b',
      '.hidden',
      'a/.meta',
      'a//b',
      'a/',
      'a\\b',
      'a b',
      'x'.repeat(256),
      'é',
    ]) {
      expect(() => objectKeySegments(key), key).toThrow(AppError);
      expect(await codeOf(store.put(key, Buffer.from('x'), { contentType: 'a/b' })), key).toBe('INVALID_ARGUMENT');
      expect(await codeOf(store.get(key)), key).toBe('INVALID_ARGUMENT');
      expect(await codeOf(store.delete(key)), key).toBe('INVALID_ARGUMENT');
      expect(await codeOf(store.exists(key)), key).toBe('INVALID_ARGUMENT');
    }
    expect(objectKeySegments('assets/0b7c-1.bin')).toEqual(['assets', '0b7c-1.bin']);
  });

  it('treats a folder, or a key below a file, as no object', async () => {
    await store.put('a/b', Buffer.from('x'), { contentType: 'a/b' });
    expect(await store.get('a')).toBeUndefined();
    expect(await store.exists('a')).toBe(false);
    expect(await store.get('a/b/c')).toBeUndefined();
    expect(await store.exists('a/b/c')).toBe(false);
    await store.delete('a');
    await store.delete('a/b/c');
    expect(await store.exists('a/b')).toBe(true);
  });

  it('reads an object whose sidecar is missing or malformed as octet-stream without metadata', async () => {
    await store.put('m', Buffer.from('x'), { contentType: 'a/b', metadata: { k: 'v' } });
    await writeFile(join(dir, '.m.meta.json'), '{"contentType": 5, "metadata": {"k": 1, "j": "ok"}}');
    expect(await store.get('m')).toMatchObject({ contentType: 'application/octet-stream', metadata: { j: 'ok' } });
    await rm(join(dir, '.m.meta.json'));
    const got = await store.get('m');
    expect(got).toMatchObject({ size: 1, contentType: 'application/octet-stream', metadata: {} });
    got!.body.destroy();
  });

  it('runs concurrent puts of one key to a consistent end', async () => {
    const bodies = Array.from({ length: 8 }, (_, i) => Buffer.alloc(10_000 + i, i));
    await Promise.all(bodies.map((b, i) => store.put('race', Readable.from([b]), { contentType: `t/${i}` })));
    const got = await store.get('race');
    const bytes = Buffer.concat(await got!.body.toArray());
    expect(bytes.length).toBe(got!.size);
    expect(bodies.some((b) => b.equals(bytes))).toBe(true);
    expect((await allFiles()).map((e) => e.name).sort()).toEqual(['.race.meta.json', 'race']);
  });
});
