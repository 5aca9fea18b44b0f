import http from 'node:http';

/**
 * One HTTP health check (NVCF container functions: the server answers its health URI with 200, or
 * `health.expectedStatusCode`). Any other status, a connection error or no answer within `timeoutMs` is
 * unhealthy. The body is drained and discarded.
 */
export function checkHealth(url: URL, expectedStatus: number, timeoutMs: number): Promise<boolean> {
  return new Promise((resolve) => {
    const req = http.get(url, { timeout: timeoutMs, agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode === expectedStatus));
      res.on('error', () => resolve(false));
    });
    req.on('timeout', () => req.destroy(new Error('health check timed out')));
    req.on('error', () => resolve(false));
  });
}
