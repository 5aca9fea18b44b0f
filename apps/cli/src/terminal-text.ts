/**
 * Characters a terminal acts on or a reader cannot see: control characters (ESC starts a sequence that can retitle
 * the window, rewrite the screen or, on some terminals, answer back), line and paragraph separators, lone
 * surrogates, and the format characters that reorder or hide text (bidi overrides and isolates, zero-width space,
 * BOM). Tab and newline too: in plain output they separate columns and rows.
 */
const UNSAFE = /[\p{Cc}\p{Cs}\p{Zl}\p{Zp}\u061c\u200b\u200e\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]/gu;

const escaped = (c: string) => {
  const cp = c.codePointAt(0) ?? 0;
  return cp < 0x100 ? `\\x${cp.toString(16).padStart(2, '0')}` : `\\u{${cp.toString(16)}}`;
};

/**
 * `text` with every such character written as an escape (`\x1b`, `\u{202e}`): what a gateway returns is printed
 * as text, never run. The gateway refuses these in names it stores now; names stored before it did are still
 * listed.
 *
 * @example
 * terminalText('\x1b]0;pwned\x07key'); // '\\x1b]0;pwned\\x07key'
 */
export const terminalText = (text: string): string => text.replace(UNSAFE, escaped);
