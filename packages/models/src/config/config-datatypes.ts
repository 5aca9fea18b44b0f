import type { Datatype } from '@nvcf/protocol';
import type { ConfigDataType } from './model-config.ts';

/**
 * API datatypes (KServe V2 names) and config `DataType` names map one to one except BYTES, which the config calls
 * TYPE_STRING (Triton model configuration: datatypes).
 *
 * @example
 * configDataType('BYTES'); // 'TYPE_STRING'
 * configDataType('FP32'); // 'TYPE_FP32'
 */
export function configDataType(datatype: Datatype): ConfigDataType {
  return datatype === 'BYTES' ? 'TYPE_STRING' : `TYPE_${datatype}`;
}

/**
 * The API datatype of a config data type; undefined for TYPE_INVALID.
 *
 * @example
 * apiDatatype('TYPE_STRING'); // 'BYTES'
 */
export function apiDatatype(type: ConfigDataType): Datatype | undefined {
  if (type === 'TYPE_INVALID') return undefined;
  if (type === 'TYPE_STRING') return 'BYTES';
  return type.slice('TYPE_'.length) as Datatype;
}
