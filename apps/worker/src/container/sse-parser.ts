/**
 * Splits a `text/event-stream` body into its events' data (HTML Living Standard: server-sent events), as bytes
 * arrive: `push` returns the events completed by a chunk. Several `data:` lines of one event are joined with
 * newlines; comments, `event:`, `id:` and `retry:` fields are dropped (the gateway numbers the events it sends).
 */
export function createSseParser() {
  let pending = '';
  let data: string[] = [];
  const decoder = new TextDecoder();
  return {
    push(chunk: Uint8Array): string[] {
      pending += decoder.decode(chunk, { stream: true });
      const events: string[] = [];
      for (;;) {
        const end = pending.search(/\r\n|\r|\n/);
        if (end < 0) break;
        const line = pending.slice(0, end);
        pending = pending.slice(end + (pending.startsWith('\r\n', end) ? 2 : 1));
        if (line === '') {
          if (data.length > 0) events.push(data.join('\n'));
          data = [];
        } else if (line.startsWith('data')) {
          const colon = line.indexOf(':');
          if (colon === 4) data.push(line.slice(line[5] === ' ' ? 6 : 5));
          else if (line === 'data') data.push('');
        }
      }
      return events;
    },
    /** The stream ended: an event its server left unterminated still counts. */
    end(): string[] {
      const events = data.length > 0 ? [data.join('\n')] : [];
      data = [];
      return events;
    },
  };
}
