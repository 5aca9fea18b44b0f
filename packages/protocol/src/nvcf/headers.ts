/** NVCF header names (NVCF API: request and response headers), lower-case as HTTP/2 and Node report them. */
export const NvcfHeader = {
  REQID: 'nvcf-reqid',
  STATUS: 'nvcf-status',
  PERCENT_COMPLETE: 'nvcf-percent-complete',
  POLL_SECONDS: 'nvcf-poll-seconds',
} as const;

/** Values of `NVCF-STATUS` (the current gateway's three; NVCF behaviour: statuses). */
export const NvcfStatus = {
  IN_PROGRESS: 'in-progress',
  FULFILLED: 'fulfilled',
  ERRORED: 'errored',
} as const;
export type NvcfStatus = (typeof NvcfStatus)[keyof typeof NvcfStatus];

export const MAX_POLL_SECONDS = 3600;
