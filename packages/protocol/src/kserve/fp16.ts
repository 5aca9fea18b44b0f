/**
 * IEEE 754 binary16 ↔ number conversion. FP16 tensors are stored as raw bit patterns (Uint16Array) so
 * that every codec moves them without loss; only JSON needs the numeric value. Written out rather
 * than built on `Float16Array`/`Math.f16round` because the TS lib we target does not declare them.
 */

const TWO_POW_24 = 2 ** 24;
/** Smallest positive normal half, 2^-14: below it values are subnormal multiples of 2^-24. */
const MIN_NORMAL = 2 ** -14;
/** Halfway between the largest finite half (65504) and 65536: from here on, round-to-even gives Inf. */
const OVERFLOW_THRESHOLD = 65520;

/** Rounds half to even; exact for the small magnitudes (< 2^12) used here. */
function roundHalfEven(x: number): number {
  const floor = Math.floor(x);
  const diff = x - floor;
  if (diff > 0.5) return floor + 1;
  if (diff < 0.5) return floor;
  return floor + (floor & 1);
}

/** floor(log2(x)) for a positive finite x, corrected because Math.log2 may be off by one near powers of two. */
function exponentOf(x: number): number {
  let e = Math.floor(Math.log2(x));
  if (2 ** e > x) e -= 1;
  else if (2 ** (e + 1) <= x) e += 1;
  return e;
}

/**
 * Converts a number to the nearest half-precision bit pattern (round to nearest, ties to even),
 * straight from the double so that no intermediate float32 rounding can double-round.
 *
 * @example
 * floatToHalfBits(1); // 0x3c00
 * floatToHalfBits(65504); // 0x7bff
 * floatToHalfBits(1e6); // 0x7c00 (Infinity)
 */
export function floatToHalfBits(value: number): number {
  if (Number.isNaN(value)) return 0x7e00;
  const sign = value < 0 || Object.is(value, -0) ? 0x8000 : 0;
  const abs = Math.abs(value);
  if (abs >= OVERFLOW_THRESHOLD) return sign | 0x7c00;
  // Scaling by a power of two is exact, so only roundHalfEven rounds. A subnormal that rounds up to
  // 0x400 is exactly the smallest normal's encoding, so no special case is needed.
  if (abs < MIN_NORMAL) return sign | roundHalfEven(abs * TWO_POW_24);
  const e = exponentOf(abs);
  const mantissa = roundHalfEven(abs / 2 ** (e - 10)); // in [1024, 2048]
  // A mantissa that rounds up to 2048 carries into the exponent, which is the right encoding.
  return sign | (((e + 15) << 10) + (mantissa - 1024));
}

/**
 * Converts a half-precision bit pattern (low 16 bits of `bits`) to its exact numeric value.
 *
 * @example
 * halfBitsToFloat(0x3c00); // 1
 * halfBitsToFloat(0x0001); // 2 ** -24
 */
export function halfBitsToFloat(bits: number): number {
  const sign = bits & 0x8000 ? -1 : 1;
  const exponent = (bits >> 10) & 0x1f;
  const fraction = bits & 0x3ff;
  if (exponent === 0) return sign * fraction * 2 ** -24;
  if (exponent === 0x1f) return fraction === 0 ? sign * Number.POSITIVE_INFINITY : Number.NaN;
  return sign * (1024 + fraction) * 2 ** (exponent - 25);
}
