/**
 * @typedef {{ t: number, queueDepth: number, accepted: number, finished: Record<string, number>,
 *   latency: { buckets: { le: number, count: number }[], count: number, sumSeconds: number } }} Sample
 */

const sum = (/** @type {number[]} */ xs) => xs.reduce((a, b) => a + b, 0);
const errorsOf = (/** @type {Sample} */ s) =>
  sum(
    Object.entries(s.finished)
      .filter(([k]) => Number(k) >= 400)
      .map(([, v]) => v),
  );

/** Answers and failed answers per second between two reads of the cumulative counters. */
export function rates(/** @type {Sample} */ a, /** @type {Sample} */ b) {
  const seconds = Math.max(1, (b.t - a.t) / 1000);
  return {
    throughput: Math.max(0, sum(Object.values(b.finished)) - sum(Object.values(a.finished))) / seconds,
    errors: Math.max(0, errorsOf(b) - errorsOf(a)) / seconds,
  };
}

/**
 * The q-quantile of the latencies observed between two reads, interpolated inside its bucket as Prometheus'
 * `histogram_quantile` does; 0 when nothing finished in between.
 * @param {Sample} a @param {Sample} b @param {number} q
 */
export function quantile(a, b, q) {
  const total = b.latency.count - a.latency.count;
  if (total <= 0) return 0;
  const before = new Map(a.latency.buckets.map((x) => [x.le, x.count]));
  const rank = q * total;
  let lower = 0;
  let below = 0;
  for (const bucket of b.latency.buckets) {
    const count = bucket.count - (before.get(bucket.le) ?? 0);
    if (count >= rank) return lower + (bucket.le - lower) * ((rank - below) / Math.max(1, count - below));
    lower = bucket.le;
    below = count;
  }
  return lower; // in the +Inf bucket: the largest finite bound is all that is known
}
