/**
 * How results are printed: `--json` (one JSON document, stable field names, for scripts), a table on a terminal,
 * and otherwise plain tab-separated lines, one per row and no header (for `cut`, `grep`, `while read`).
 */
import Table from 'cli-table3';
import { terminalText } from './terminal-text.ts';

export type OutputMode = 'json' | 'table' | 'plain';

/** A cell: a list is shown one item a line. */
export type CellValue = string | number | boolean | readonly string[] | undefined;

export interface Column<T> {
  header: string;
  value: (row: T) => CellValue;
}

/** Where output goes: stdout in `nvcf`, a buffer in tests. */
export interface Sink {
  write(text: string): unknown;
  isTTY?: boolean;
}

export interface Output {
  readonly mode: OutputMode;
  /** Rows: a table, tab-separated lines, or (`--json`) `json` as given — the SDK's objects, unabridged. */
  list<T>(rows: readonly T[], columns: readonly Column<T>[], json?: unknown): void;
  /** One object: a two-column table, `key<TAB>value` lines, or (`--json`) `json` as given. */
  record(fields: Record<string, CellValue>, json: unknown): void;
  /** A confirmation such as `deleted …`, or (`--json`) `json`. */
  done(message: string, json: unknown): void;
  /** Any JSON value on its own line(s). */
  json(value: unknown): void;
}

/**
 * What a cell shows. Every value is escaped (`terminalText`): names and text come from the gateway, set by any
 * account, and must not drive the terminal or break a plain line into columns or rows.
 */
const cell = (v: CellValue): string => {
  if (v === undefined) return '';
  if (typeof v === 'string') return terminalText(v);
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  return v.map(terminalText).join('\n');
};

/** A rule under the header only, no colours: compact, and the same in a terminal, a log and the README. */
const COMPACT = { style: { compact: true, head: [], border: [] } };

export function outputMode(json: boolean, stdout: Sink): OutputMode {
  return json ? 'json' : stdout.isTTY ? 'table' : 'plain';
}

export function createOutput(mode: OutputMode, sink: Sink): Output {
  const json = (value: unknown) => sink.write(`${JSON.stringify(value, null, 2)}\n`);
  return {
    mode,
    json,
    list(rows, columns, jsonValue = rows) {
      if (mode === 'json') return void json(jsonValue);
      if (mode === 'plain') {
        for (const row of rows) sink.write(`${columns.map((c) => cell(c.value(row))).join('\t')}\n`);
        return;
      }
      if (rows.length === 0) return void sink.write('(none)\n');
      const table = new Table({ ...COMPACT, head: columns.map((c) => c.header) });
      for (const row of rows) table.push(columns.map((c) => cell(c.value(row))));
      sink.write(`${table.toString()}\n`);
    },
    record(fields, jsonValue) {
      if (mode === 'json') return void json(jsonValue);
      const entries = Object.entries(fields)
        .filter(([, v]) => v !== undefined && v !== '' && !(Array.isArray(v) && v.length === 0))
        .map(([k, v]) => [terminalText(k), v] as const);
      if (mode === 'plain') {
        for (const [k, v] of entries) sink.write(`${k}\t${cell(v)}\n`);
        return;
      }
      const table = new Table({ ...COMPACT });
      for (const [k, v] of entries) table.push({ [k]: cell(v) });
      sink.write(`${table.toString()}\n`);
    },
    done(message, jsonValue) {
      if (mode === 'json') return void json(jsonValue);
      sink.write(`${terminalText(message)}\n`);
    },
  };
}
