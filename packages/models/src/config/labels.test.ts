import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readLabels } from './labels.ts';

let dir: string;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'models-labels-'));
});

afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('readLabels', () => {
  it('reads one label per line, ignoring the final newline', async () => {
    await writeFile(join(dir, 'labels.txt'), 'tench\ngoldfish\ngreat white shark\n');
    expect(await readLabels(dir, 'labels.txt')).toEqual(['tench', 'goldfish', 'great white shark']);
  });

  it('handles CRLF, a missing final newline, a BOM, and keeps empty labels in the middle', async () => {
    await writeFile(join(dir, 'l.txt'), '\uFEFFa\r\n\r\nc');
    expect(await readLabels(dir, 'l.txt')).toEqual(['a', '', 'c']);
  });

  it('reads an empty file as no labels', async () => {
    await writeFile(join(dir, 'empty.txt'), '');
    expect(await readLabels(dir, 'empty.txt')).toEqual([]);
  });

  it('reports a missing file by name', async () => {
    await expect(readLabels(dir, 'nope.txt')).rejects.toThrow(
      "label file 'nope.txt' cannot be read: it does not exist",
    );
  });

  it('refuses a path outside the model directory', async () => {
    await expect(readLabels(dir, '../secret.txt')).rejects.toThrow('must be inside the model directory');
    await expect(readLabels(dir, '/etc/hostname')).rejects.toThrow('must be inside the model directory');
  });
});
