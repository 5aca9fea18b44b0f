/**
 * Timings of the requests this tab sent from the playground, by request id (the API keeps no timings a caller
 * can read, so the console remembers what it saw: when it sent, when the id came back, when the answer came).
 * @type {Map<string, { functionName: string, sentAt: number, acceptedAt?: number, answeredAt?: number, status?: number }>}
 */
export const requestLog = new Map();
