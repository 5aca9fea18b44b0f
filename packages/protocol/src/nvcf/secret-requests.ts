import { z } from 'zod';

/** NVCF's secret names (NVCF API reference: SecretDto): what an environment variable may be called. */
const SECRET_NAME_PATTERN = /^[a-z0-9A-Z][a-z0-9A-Z_]*$/;

/**
 * One secret (NVCF API reference: SecretDto): a name of 1–64 characters and a value of 1–4096. A container
 * function's server gets it as an environment variable (README: Secrets).
 */
export const SecretDto = z
  .object({
    name: z
      .string()
      .min(1, 'must not be blank')
      .max(64, 'must be at most 64 characters')
      .regex(SECRET_NAME_PATTERN, "must match '^[a-z0-9A-Z][a-z0-9A-Z_]*$'")
      .describe('Secret name: the environment variable the function’s server gets it as.'),
    value: z
      .string()
      .min(1, 'must not be blank')
      .max(4096, 'must be at most 4096 characters')
      .describe('Secret value (never returned).'),
  })
  .meta({ id: 'SecretDto', description: 'A secret’s name and value.' });
export type SecretDto = z.infer<typeof SecretDto>;

/**
 * NVCF's `uniqueItems`, and one value per name: a name given twice is refused, not resolved by order (NVCF behaviour:
 * Secrets).
 */
export const SecretList = z
  .array(SecretDto)
  .superRefine((secrets, ctx) => {
    const seen = new Set<string>();
    for (const { name } of secrets) {
      if (seen.has(name)) {
        ctx.addIssue({ code: 'custom', message: `'secrets' names '${name}' more than once` });
        return;
      }
      seen.add(name);
    }
  })
  .meta({ uniqueItems: true });

/** The body of `PUT /v2/nvcf/secrets/functions/{functionId}/versions/{versionId}` (NVCF: updateSecrets). */
export const UpdateSecretsRequest = z.object({
  secrets: SecretList.describe('The version’s whole set: it replaces the secrets the version had.'),
});
export type UpdateSecretsRequest = z.infer<typeof UpdateSecretsRequest>;
