// Every configuration option: its group, name, type, default and the
// environment variable that sets it, in one table. The loader (load.ts) and the
// documentation test read this table, so an option cannot exist without a
// default, a validation rule and an entry in docs/configuration.md.
//
// Defaults and minimums are Masakari 22.0.0's (masakari/conf/*.py). Where
// Masakari has no lower bound but a value below it would break the engine
// (a negative wait, a 0 s poll interval that spins), the bound is added here and
// marked "stricter than Masakari" in the docs.
//
// The table is assembled here from one file per area (options-*.ts); the
// shape of an option is in option-spec.ts.

import { API_OPTIONS } from './options-api.ts';
import { DEFAULT_OPTIONS } from './options-default.ts';
import { OPERATOR_OPTIONS } from './options-operator.ts';
import { RECOVERY_OPTIONS } from './options-recovery.ts';
import type { OptionTable } from './option-spec.ts';

export { COMPONENT_NAMES } from './option-spec.ts';
export type { ComponentName, GroupName, OptionSpec, OptionTable } from './option-spec.ts';

export const OPTIONS: OptionTable = {
  ...DEFAULT_OPTIONS,
  ...RECOVERY_OPTIONS,
  ...API_OPTIONS,
  ...OPERATOR_OPTIONS,
};
