import type { z } from 'zod';

/**
 * Renders the first zod issue the way Triton words its errors: naming the tensor by its `name`
 * when the body gives one (`input 'INPUT0': 'shape[1]': ...`), not by its array index.
 *
 * @param what what the body is, for issues outside any tensor: `infer request`, `infer response`.
 */
export function zodIssueMessage(error: z.ZodError, body: unknown, what: string): string {
  const issue = error.issues[0];
  if (issue === undefined) return `invalid ${what}`;
  const [head, index, ...rest] = issue.path;
  if ((head === 'inputs' || head === 'outputs') && typeof index === 'number') {
    const entry = (body as Record<string, unknown[] | undefined>)[head]?.[index];
    const name = (entry as { name?: unknown } | null | undefined)?.name;
    const kind = head === 'inputs' ? 'input' : 'output';
    const tensor = typeof name === 'string' && name !== '' ? `${kind} '${name}'` : `${head}[${index}]`;
    return rest.length > 0 ? `${tensor}: '${formatPath(rest)}': ${issue.message}` : `${tensor}: ${issue.message}`;
  }
  return issue.path.length > 0 ? `${what}: '${formatPath(issue.path)}': ${issue.message}` : `${what}: ${issue.message}`;
}

function formatPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const key of path) {
    if (typeof key === 'number') out += `[${key}]`;
    else out += out === '' ? String(key) : `.${String(key)}`;
  }
  return out;
}
