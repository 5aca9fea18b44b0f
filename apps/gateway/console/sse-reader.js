/**
 * Reads a `text/event-stream` body as it arrives (EventSource cannot send an Authorization header, so the
 * console streams with fetch), calling `onEvent` for each event.
 * @param {ReadableStream<BufferSource>} body
 * @param {(e: { event: string, data: string, id: string }) => void} onEvent
 */
export async function readEvents(body, onEvent) {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += value.replace(/\r\n?/g, '\n');
    let end = buffer.indexOf('\n\n');
    while (end >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const e = { event: 'message', data: '', id: '' };
      const data = [];
      for (const line of block.split('\n')) {
        const colon = line.indexOf(':');
        if (colon === 0) continue; // a comment (keep-alive)
        const field = colon < 0 ? line : line.slice(0, colon);
        const val = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
        if (field === 'data') data.push(val);
        else if (field === 'event') e.event = val;
        else if (field === 'id') e.id = val;
      }
      if (data.length > 0) onEvent({ ...e, data: data.join('\n') });
      end = buffer.indexOf('\n\n');
    }
  }
}
