/**
 * A small inference server that exercises NVCF's container contract (NVCF docs: container functions), for the
 * worker's tests and as an example of what a function's server sees. No dependencies beyond Node.
 *
 * Every call is `POST <inferenceUrl>` with a JSON body; `action` picks what it does:
 * - none: echoes the body (parsed, and `raw` as it arrived), the method and path, every header it received (the `NVCF-*` ones included), its pid,
 *   an id of this run of the process (`instance`: a pid repeats in a sandbox's own PID namespace) and its environment
 * - `assets`: lists the files in `NVCF-ASSET-DIR` (name, size, text) and `NVCF-FUNCTION-ASSET-IDS`
 * - `large-output`: writes `<reqId>_result.json` of `bytes` bytes into `NVCF-LARGE-OUTPUT-DIR`
 * - `progress`: writes the `progress` file (42 %, a partial response), waits for the file `gate`, then answers
 * - `sse`: answers `text/event-stream`, `events` events; with `gate`, waits for that file after the first one,
 *   and writes `<gate>.closed` when its client (the worker) goes away before the end; with `resetAfter`, resets
 *   the connection once that many events went out
 * - `accept`: answers 202, then 202 to the next `polls - 1` GETs of the same request (`NVCF-REQID`), then 200
 * - `error`: answers `status` with `{"error": <error>}`
 * - `hold`: writes `<gate>.entered-<reqId>`, waits for the file `gate`, then answers how many calls it held at
 *   once at most (a check of the worker's `maxRequestConcurrency`)
 * - `crash`: exits at once, answering nothing
 *
 * `GET /health` answers 200, or 503 while the file named by `ECHO_SICK_FILE` exists. It listens on `PORT`.
 */

import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

const INSTANCE = randomUUID();

interface Call {
  action?: string;
  bytes?: number;
  gate?: string;
  events?: number;
  polls?: number;
  status?: number;
  error?: string;
  resetAfter?: number;
}

/** Calls held by `hold` right now, and the most at once. */
let holding = 0;
let mostHeld = 0;

/** Requests answered 202, by `NVCF-REQID`: the GETs they still answer 202 to. */
const accepted = new Map<string, number>();

const header = (req: IncomingMessage, name: string) => String(req.headers[name] ?? '');

/** The body as it arrived (echoed as `raw`: what a function receives is the client's bytes) and parsed. */
async function readJson(req: IncomingMessage): Promise<{ raw: string; value: unknown }> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const raw = Buffer.concat(chunks).toString('utf8');
  return { raw, value: raw ? JSON.parse(raw) : {} };
}

function json(res: ServerResponse, status: number, value: unknown) {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(value));
}

async function waitForFile(path: string) {
  while (!existsSync(path)) await sleep(25);
}

async function handle(req: IncomingMessage, res: ServerResponse) {
  if (req.method === 'GET' && req.url === '/health') {
    const sick = process.env.ECHO_SICK_FILE && existsSync(process.env.ECHO_SICK_FILE);
    return json(res, sick ? 503 : 200, { healthy: !sick });
  }
  const reqId = header(req, 'nvcf-reqid');
  if (req.method === 'GET') {
    const left = accepted.get(reqId);
    if (left === undefined) return json(res, 404, { error: `no accepted request ${reqId}` });
    if (left > 0) {
      accepted.set(reqId, left - 1);
      res.writeHead(202).end();
      return;
    }
    accepted.delete(reqId);
    return json(res, 200, { done: true, reqId });
  }
  const { raw, value } = await readJson(req);
  const call = value as Call & Record<string, unknown>;
  const outputDir = header(req, 'nvcf-large-output-dir');
  switch (call.action) {
    case 'assets': {
      const dir = header(req, 'nvcf-asset-dir');
      const names = await readdir(dir);
      const files = await Promise.all(
        names.map(async (name) => {
          const body = await readFile(join(dir, name));
          return { name, size: body.length, text: body.toString('utf8') };
        }),
      );
      return json(res, 200, { assetDir: dir, assetIds: header(req, 'nvcf-function-asset-ids'), files });
    }
    case 'large-output': {
      await writeFile(join(outputDir, `${reqId}_result.json`), 'x'.repeat(call.bytes ?? 1024));
      return json(res, 200, { written: `${reqId}_result.json` });
    }
    case 'progress': {
      const progress = { id: reqId, progress: 42, partialResponse: { step: 'halfway' } };
      await writeFile(join(outputDir, 'progress'), JSON.stringify(progress));
      if (call.gate) await waitForFile(call.gate);
      return json(res, 200, { done: true });
    }
    case 'sse': {
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      let closedEarly = true;
      res.on('close', () => {
        if (closedEarly && call.gate) void writeFile(`${call.gate}.closed`, 'closed');
      });
      const count = call.events ?? 3;
      for (let i = 0; i < count; i++) {
        await new Promise((written) => res.write(`event: token\ndata: {"n":${i}}\n\n`, written));
        if (call.resetAfter === i + 1) {
          res.socket?.resetAndDestroy();
          return;
        }
        if (i === 0 && call.gate) await waitForFile(call.gate);
        if (res.destroyed) return;
      }
      res.write('data: [DONE]\n\n');
      closedEarly = false;
      res.end();
      return;
    }
    case 'accept': {
      accepted.set(reqId, Math.max(0, (call.polls ?? 1) - 1));
      res.writeHead(202).end();
      return;
    }
    case 'hold': {
      holding++;
      mostHeld = Math.max(mostHeld, holding);
      try {
        if (call.gate) {
          await writeFile(`${call.gate}.entered-${reqId}`, '');
          await waitForFile(call.gate);
        }
      } finally {
        holding--;
      }
      return json(res, 200, { mostHeld });
    }
    case 'error':
      return json(res, call.status ?? 500, { error: call.error ?? 'failed' });
    case 'crash':
      process.exit(1);
      return;
    default:
      return json(res, 200, {
        method: req.method,
        path: req.url,
        body: call,
        raw,
        headers: req.headers,
        pid: process.pid,
        instance: INSTANCE,
        env: process.env,
      });
  }
}

const server = createServer((req, res) => {
  handle(req, res).catch((err: unknown) => json(res, 500, { error: String(err) }));
});
server.listen(Number(process.env.PORT ?? 8000), process.env.HOST ?? '0.0.0.0', () => {
  const address = server.address();
  console.log(`echo-server listening on ${typeof address === 'object' && address ? address.port : address}`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
