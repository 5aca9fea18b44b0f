import { describe, expect, it } from 'vitest';
import { createOutput, type OutputMode } from './output.ts';
import { terminalText } from './terminal-text.ts';

const HOSTILE = '\x1b]0;pwned\x07evil\x1b[2J\u202egpj.exe\tcol\nrow\x9b';
const ESCAPED = '\\x1b]0;pwned\\x07evil\\x1b[2J\\u{202e}gpj.exe\\x09col\\x0arow\\x9b';

/** Everything a mode prints for a list, a record and a confirmation naming `text`. */
function printed(mode: OutputMode, text: string): string {
  let out = '';
  const o = createOutput(mode, { write: (t: string) => (out += t), isTTY: mode === 'table' });
  o.list([{ name: text }], [{ header: 'NAME', value: (r) => r.name }]);
  o.record({ name: text, [text]: 'key', lines: ['one', text] }, {});
  o.done(`revoked ${text}`, {});
  return out;
}

describe('terminalText', () => {
  it('writes control, separator and invisible format characters as escapes, leaving printable text alone', () => {
    expect(terminalText(HOSTILE)).toBe(ESCAPED);
    expect(terminalText('clé de Zoë 日本 👨‍👩‍👧 \\x1b')).toBe('clé de Zoë 日本 👨‍👩‍👧 \\x1b');
    expect(terminalText('\x00\x7f\u2028\ud800\ufeff')).toBe('\\x00\\x7f\\u{2028}\\u{d800}\\u{feff}');
  });
});

describe('output', () => {
  it.each(['table', 'plain'] as const)('%s: a name with a terminal sequence prints escaped, never raw', (mode) => {
    const out = printed(mode, HOSTILE);
    for (const raw of ['\x1b', '\x07', '\x9b', '\u202e']) expect(out).not.toContain(raw);
    expect(out).toContain(ESCAPED);
  });

  it('plain: one line per row, the tab and newline of a value escaped; a list value one item a line', () => {
    let out = '';
    const o = createOutput('plain', { write: (t: string) => (out += t) });
    o.list(
      [{ a: 'x\ty', b: 'p\nq' }],
      [
        { header: 'A', value: (r) => r.a },
        { header: 'B', value: (r) => r.b },
      ],
    );
    expect(out).toBe('x\\x09y\tp\\x0aq\n');
    out = '';
    o.record({ models: ['m1', 'm2'], none: [] }, {});
    expect(out).toBe('models\tm1\nm2\n');
  });

  it('--json stays JSON: what a script parses is the gateway’s value', () => {
    let out = '';
    createOutput('json', { write: (t: string) => (out += t) }).list([{ name: HOSTILE }], [], [{ name: HOSTILE }]);
    expect(out).not.toContain('\x1b');
    expect(JSON.parse(out)).toEqual([{ name: HOSTILE }]);
  });
});
