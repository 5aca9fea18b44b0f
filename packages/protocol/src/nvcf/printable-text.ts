import { z } from 'zod';

/**
 * Characters a tenant-set name or text must not hold: control characters (C0, DEL, C1: ESC starts a terminal
 * sequence that `nvcf keys list` once printed raw), line and paragraph separators, lone surrogates, and the
 * invisible format characters that reorder or hide text (bidi overrides and isolates, zero-width space, BOM).
 * Another account's CLI, console or log shows these fields.
 */
const NON_PRINTABLE =
  /[\p{Cc}\p{Cs}\p{Zl}\p{Zp}\u061c\u200b\u200e\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]/u;

/** The refusal, as `parseControlRequest` prefixes it with the field: `'name' must not contain …`. */
export const NON_PRINTABLE_MESSAGE = 'must not contain control characters or other non-printable characters';

/** Whether `text` holds nothing a terminal or a page would act on or hide. */
export const isPrintableText = (text: string): boolean => !NON_PRINTABLE.test(text);

/**
 * A string schema that refuses non-printable characters (see `isPrintableText`), for names and text a tenant
 * sets and others are shown.
 *
 * @example
 * const Body = z.object({ name: printableText().min(1).max(128) });
 */
export const printableText = () => z.string().refine(isPrintableText, NON_PRINTABLE_MESSAGE);
