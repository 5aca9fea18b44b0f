import { NvcfConnectionError, NvcfError } from '@nvcf/client';
import { CommanderError } from 'commander';
import { describe, expect, it } from 'vitest';
import { EXIT, exitCodeFor, formatError, InterruptedError, UsageError } from './errors.ts';

describe('exit codes and error lines', () => {
  it('maps each failure to its documented code', () => {
    expect(exitCodeFor(new NvcfError(404, { title: 'Not Found' }))).toBe(EXIT.CLIENT);
    expect(exitCodeFor(new NvcfError(503, { title: 'Service Unavailable' }))).toBe(EXIT.SERVER);
    expect(exitCodeFor(new NvcfConnectionError('down'))).toBe(EXIT.SERVER);
    expect(exitCodeFor(new UsageError('x'))).toBe(EXIT.USAGE);
    expect(exitCodeFor(new CommanderError(1, 'commander.unknownOption', 'x'))).toBe(EXIT.USAGE);
    expect(exitCodeFor(new CommanderError(0, 'commander.helpDisplayed', 'x'))).toBe(EXIT.OK);
    expect(exitCodeFor(new InterruptedError())).toBe(EXIT.INTERRUPTED);
    expect(exitCodeFor(new Error('ENOENT'))).toBe(EXIT.CLIENT);
  });

  it('says the problem’s title, detail and request id on one line', () => {
    const err = new NvcfError(400, { title: 'Bad Request', detail: 'no inputs' }, { requestId: 'r-1' });
    expect(formatError(err)).toBe('nvcf: Bad Request: no inputs (request r-1)');
    expect(formatError(new NvcfError(500, {}))).toBe('nvcf: HTTP 500');
    const cause = Object.assign(new Error('connect'), { code: 'ECONNREFUSED' });
    const down = new NvcfConnectionError('GET x failed: fetch failed', {
      cause: new TypeError('fetch failed', { cause }),
    });
    expect(formatError(down)).toBe('nvcf: cannot reach the gateway: GET x failed: fetch failed (ECONNREFUSED)');
    expect(formatError(new InterruptedError('r-2'))).toBe('nvcf: interrupted (request r-2 cancelled)');
  });
});
