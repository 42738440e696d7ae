// The two boolean vocabularies of Masakari.
// Bodies: the JSON schema's enum (validation/parameter_types.py boolean), then
// oslo strutils.bool_from_string(strict=True) to turn the accepted words into
// booleans. Query strings: bool_from_string(strict=True) directly, which knows
// t/y/f/n but not TRUE/On/YES-style words beyond case folding.

const TRUE_STRINGS = ['1', 't', 'true', 'on', 'y', 'yes'];
const FALSE_STRINGS = ['0', 'f', 'false', 'off', 'n', 'no'];

/** strutils' error text: the accepted words, sorted, each quoted. */
function unrecognised(value: string): string {
  const acceptable = [...TRUE_STRINGS, ...FALSE_STRINGS]
    .sort()
    .map((w) => `'${w}'`)
    .join(', ');
  return `Unrecognized value '${value}', acceptable values are: ${acceptable}`;
}

export class InvalidBooleanString extends Error {}

/** oslo_utils.strutils.bool_from_string(value, strict=True). Throws InvalidBooleanString with strutils' text. */
export function boolFromStringStrict(value: unknown): boolean {
  if (typeof value === 'boolean') return value;
  const text = String(value).trim().toLowerCase();
  if (TRUE_STRINGS.includes(text)) return true;
  if (FALSE_STRINGS.includes(text)) return false;
  throw new InvalidBooleanString(unrecognised(String(value)));
}

/** The body boolean enum of validation/parameter_types.py (order matters: it is printed in messages). */
export const BODY_BOOLEAN_VALUES: readonly (boolean | string)[] = [
  true,
  'True',
  'TRUE',
  'true',
  '1',
  'ON',
  'On',
  'on',
  'YES',
  'Yes',
  'yes',
  false,
  'False',
  'FALSE',
  'false',
  '0',
  'OFF',
  'Off',
  'off',
  'NO',
  'No',
  'no',
];

/** A body boolean already accepted by the schema, as a boolean. */
export function parseBodyBoolean(value: boolean | string): boolean {
  return boolFromStringStrict(value);
}
