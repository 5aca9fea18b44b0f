/** One sample of Prometheus' text exposition format. */
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

/**
 * Parses the text format (https://prometheus.io/docs/instrumenting/exposition_formats/) far enough for
 * tests: samples with their labels; comments (# HELP, # TYPE) are skipped.
 */
function parseSamples(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const m = SAMPLE.exec(line);
    if (!m?.[1] || m[3] === undefined) continue;
    const labels: Record<string, string> = {};
    for (const [, k, v] of (m[2] ?? '').matchAll(LABEL)) if (k !== undefined && v !== undefined) labels[k] = v;
    samples.push({ name: m[1], labels, value: Number(m[3]) });
  }
  return samples;
}

/** The metric families a text exposition declares (`# TYPE name type`). */
export function familyNames(text: string): string[] {
  return [...text.matchAll(/^# TYPE (\S+) \S+$/gm)].flatMap((m) => (m[1] ? [m[1]] : []));
}

/** GETs a /metrics endpoint and parses it. */
export async function scrape(url: string): Promise<{ text: string; samples: Sample[] }> {
  const res = await fetch(url);
  if (res.status !== 200) throw new Error(`GET ${url}: ${res.status}`);
  const text = await res.text();
  return { text, samples: parseSamples(text) };
}

/** The value of the one sample named `name` whose labels include `labels` (0 when there is none). */
export function sampleValue(samples: Sample[], name: string, labels: Record<string, string> = {}): number {
  const hits = samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
  if (hits.length > 1) throw new Error(`${hits.length} samples of ${name} match ${JSON.stringify(labels)}`);
  return hits[0]?.value ?? 0;
}

/** Scrapes until `check` passes (it throws until then), at most `timeoutMs`: for values set after a response. */
export async function eventually(
  url: string,
  check: (samples: Sample[]) => void,
  timeoutMs = 15_000,
): Promise<Sample[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const { samples } = await scrape(url);
    try {
      check(samples);
      return samples;
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await new Promise((r) => setTimeout(r, 25));
    }
  }
}
