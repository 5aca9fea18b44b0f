import { describe, expect, it } from 'vitest';
import { UsageError } from './errors.ts';
import { parseSecretArgs } from './secret-args.ts';

const sources = {
  file: async (path: string) => {
    if (path === 'token.txt') return 'from-a-file\n';
    throw new Error(`ENOENT: ${path}`);
  },
  stdin: async () => 'from-stdin\r\n',
};

describe('secret arguments', () => {
  it('reads NAME=VALUE, NAME=@FILE and NAME=- (without the trailing newline), in order', async () => {
    expect(
      await parseSecretArgs(['A=x=y', 'B=@token.txt', 'C=-', 'D=@'], { ...sources, file: async () => 'f' }),
    ).toEqual([
      { name: 'A', value: 'x=y' },
      { name: 'B', value: 'f' },
      { name: 'C', value: 'from-stdin' },
      { name: 'D', value: 'f' },
    ]);
    expect(await parseSecretArgs(['B=@token.txt'], sources)).toEqual([{ name: 'B', value: 'from-a-file' }]);
    expect(await parseSecretArgs([], sources)).toEqual([]);
  });

  it('refuses what is not a pair, a name twice and stdin twice, before anything is read', async () => {
    for (const [args, message] of [
      [['NOEQUALS'], /NAME=VALUE/],
      [['=value'], /NAME=VALUE/],
      [['A=1', 'A=2'], /'A' is given more than once/],
      [['A=-', 'B=-'], /only one secret can be read from stdin/],
    ] as const) {
      await expect(parseSecretArgs(args, sources)).rejects.toThrow(message);
      await expect(parseSecretArgs(args, sources)).rejects.toBeInstanceOf(UsageError);
    }
  });

  it('fails on a file it cannot read', async () => {
    await expect(parseSecretArgs(['A=@missing'], sources)).rejects.toThrow(/ENOENT/);
  });
});
