import type { ModelRepositoryParameterMsg } from '@nvcf/kserve-grpc';
import { AppError } from '@nvcf/protocol';
import type { LoadOptions } from '../core/core-types.ts';

/**
 * RepositoryModelLoad's parameters as the core's load options (Triton model repository extension):
 * `config` (string_param) is a ModelConfig in JSON that replaces config.pbtxt for this load. Triton's
 * `file:<version>/<name>` model-file overrides are not supported here; any other name is refused.
 *
 * @throws AppError INVALID_ARGUMENT for an unknown parameter or a `config` that is not a string;
 *   UNIMPLEMENTED for `file:` parameters.
 */
export function repositoryLoadOptions(params: Record<string, ModelRepositoryParameterMsg>): LoadOptions {
  const opts: LoadOptions = {};
  for (const [name, p] of Object.entries(params)) {
    if (name === 'config') {
      if (p.parameter_choice !== 'string_param' || p.string_param === undefined) {
        throw new AppError(
          'INVALID_ARGUMENT',
          `load parameter 'config' must be a string_param holding the model config as JSON`,
        );
      }
      opts.configOverride = p.string_param;
    } else if (name.startsWith('file:')) {
      throw new AppError(
        'UNIMPLEMENTED',
        `load parameter '${name}': model file overrides are not supported by this server`,
      );
    } else {
      throw new AppError('INVALID_ARGUMENT', `Unrecognized load parameter '${name}'.`);
    }
  }
  return opts;
}
