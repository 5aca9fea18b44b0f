import type { z } from 'zod';

/**
 * Parses the environment with a schema, once, at start-up. Returns every problem at once rather than
 * the first, so an operator fixes their config in one go.
 */
export function parseEnvConfig<S extends z.ZodType>(
  schema: S,
  env: NodeJS.ProcessEnv,
): { ok: true; config: z.infer<S> } | { ok: false; problems: string[] } {
  const parsed = schema.safeParse(env);
  if (parsed.success) return { ok: true, config: parsed.data };
  const problems = parsed.error.issues.map((i) => `${i.path.join('.') || '(env)'}: ${i.message}`);
  return { ok: false, problems };
}

/** For libraries and tests: the parsed config, or an Error listing every problem. */
export function loadEnvConfig<S extends z.ZodType>(schema: S, env: NodeJS.ProcessEnv, app: string): z.infer<S> {
  const result = parseEnvConfig(schema, env);
  if (result.ok) return result.config;
  throw new Error(`invalid ${app} configuration:\n  - ${result.problems.join('\n  - ')}`);
}

/** For `main.ts`: print every problem and exit 1 on invalid config. */
export function loadEnvConfigOrExit<S extends z.ZodType>(schema: S, env: NodeJS.ProcessEnv, app: string): z.infer<S> {
  const result = parseEnvConfig(schema, env);
  if (result.ok) return result.config;
  process.stderr.write(`${app}: invalid configuration\n${result.problems.map((p) => `  - ${p}`).join('\n')}\n`);
  process.exit(1);
}
