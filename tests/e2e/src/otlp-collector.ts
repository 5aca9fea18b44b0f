import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';
import { z } from 'zod';

/**
 * OTLP/HTTP JSON, as much of it as the trace tests read
 * (https://opentelemetry.io/docs/specs/otlp/#json-protobuf-encoding): ids are hex strings there.
 */
const AnyValue = z.object({
  stringValue: z.string().optional(),
  intValue: z.union([z.string(), z.number()]).optional(),
  boolValue: z.boolean().optional(),
  doubleValue: z.number().optional(),
});
const Attributes = z.array(z.object({ key: z.string(), value: AnyValue })).default([]);
const OtlpSpan = z.object({
  traceId: z.string(),
  spanId: z.string(),
  parentSpanId: z.string().optional(),
  name: z.string(),
  kind: z.number().optional(),
  startTimeUnixNano: z.union([z.string(), z.number()]),
  endTimeUnixNano: z.union([z.string(), z.number()]),
  attributes: Attributes,
});
const ExportTraceServiceRequest = z.object({
  resourceSpans: z
    .array(
      z.object({
        resource: z.object({ attributes: Attributes }).optional(),
        scopeSpans: z.array(z.object({ spans: z.array(OtlpSpan).default([]) })).default([]),
      }),
    )
    .default([]),
});

/** One received span, flattened: its service and attributes as plain values. */
export interface CollectedSpan {
  service: string;
  traceId: string;
  spanId: string;
  /** Empty for a root span. */
  parentSpanId: string;
  name: string;
  kind: number;
  startNs: bigint;
  endNs: bigint;
  attributes: Record<string, string | number | boolean>;
}

export interface OtlpCollector {
  /** The base URL to give as `OTEL_EXPORTER_OTLP_ENDPOINT`. */
  url: string;
  spans: CollectedSpan[];
  /** Requests that were not OTLP JSON traces (the test fails on any). */
  refused: string[];
  close(): Promise<void>;
}

function plain(attrs: z.infer<typeof Attributes>): Record<string, string | number | boolean> {
  const out: Record<string, string | number | boolean> = {};
  for (const { key, value } of attrs) {
    const v = value.stringValue ?? value.boolValue ?? value.doubleValue ?? value.intValue;
    if (v !== undefined) out[key] = typeof v === 'string' && value.intValue !== undefined ? Number(v) : v;
  }
  return out;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** A collector in the test's process: a node:http server taking `POST /v1/traces` in OTLP/HTTP JSON. */
export async function startOtlpCollector(): Promise<OtlpCollector> {
  const spans: CollectedSpan[] = [];
  const refused: string[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      const body = req.headers['content-encoding'] === 'gzip' ? gunzipSync(raw) : raw;
      let parsed: z.infer<typeof ExportTraceServiceRequest> | undefined;
      if (req.method === 'POST' && req.url === '/v1/traces' && /json/.test(req.headers['content-type'] ?? '')) {
        const result = ExportTraceServiceRequest.safeParse(parseJson(body.toString('utf8')));
        if (result.success) parsed = result.data;
      }
      if (!parsed) {
        refused.push(`${req.method} ${req.url} ${req.headers['content-type']}`);
        res.writeHead(400).end();
        return;
      }
      for (const rs of parsed.resourceSpans) {
        const service = String(plain(rs.resource?.attributes ?? [])['service.name'] ?? '');
        for (const ss of rs.scopeSpans) {
          for (const s of ss.spans) {
            spans.push({
              service,
              traceId: s.traceId,
              spanId: s.spanId,
              parentSpanId: s.parentSpanId ?? '',
              name: s.name,
              kind: s.kind ?? 0,
              startNs: BigInt(s.startTimeUnixNano),
              endNs: BigInt(s.endTimeUnixNano),
              attributes: plain(s.attributes),
            });
          }
        }
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    spans,
    refused,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
