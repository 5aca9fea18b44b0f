/** Where a function's answer goes: `--out FILE`, stdout, or (`--json`) an envelope with its request id. */
import { writeFile } from 'node:fs/promises';

export interface Answer {
  requestId: string;
  status: number;
  contentType: string;
  body: Uint8Array;
}

export interface AnswerTarget {
  out?: string | undefined;
  json: boolean;
  stdout: { write(chunk: Uint8Array | string): unknown; isTTY?: boolean };
  stderr: { write(chunk: string): unknown; isTTY?: boolean };
}

const TEXT = /^(text\/|application\/([\w.+-]*\+)?(json|xml|x-ndjson|javascript)\b)/i;

export const isText = (contentType: string) => TEXT.test(contentType.trim());

/** The body inside `--json`'s envelope: parsed JSON, else text, else base64. */
function bodyJson(answer: Answer): unknown {
  const buffer = Buffer.from(answer.body.buffer, answer.body.byteOffset, answer.body.byteLength);
  if (!isText(answer.contentType)) return { base64: buffer.toString('base64') };
  const text = buffer.toString('utf8');
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

export async function writeAnswer(answer: Answer, target: AnswerTarget): Promise<void> {
  const { requestId, status, contentType } = answer;
  if (target.out) {
    await writeFile(target.out, answer.body);
    const envelope = { requestId, status, contentType, bytes: answer.body.byteLength, out: target.out };
    if (target.json) target.stdout.write(`${JSON.stringify(envelope, null, 2)}\n`);
    else if (target.stderr.isTTY)
      target.stderr.write(`wrote ${envelope.bytes} bytes to ${target.out} (request ${requestId})\n`);
    return;
  }
  if (target.json) {
    target.stdout.write(`${JSON.stringify({ requestId, status, contentType, body: bodyJson(answer) }, null, 2)}\n`);
    return;
  }
  if (!isText(contentType) && target.stdout.isTTY) {
    throw new Error(
      `the answer is ${answer.body.byteLength} bytes of ${contentType}, not for a terminal: ` +
        `write it with --out FILE or redirect stdout (request ${requestId})`,
    );
  }
  target.stdout.write(answer.body);
  // A prompt glued to the answer's last line is hard to read; a pipe gets the bytes exactly.
  if (target.stdout.isTTY && answer.body.at(-1) !== 0x0a) target.stdout.write('\n');
}
