// The shape of one configuration option (options.ts has the table) and the
// helpers the group files share.

import type { Config } from './config.ts';
import { integer, type Parser } from './parsers.ts';

export type GroupName = keyof Config;

export const COMPONENT_NAMES = ['api', 'engine', 'remediation', 'detection'] as const;
export type ComponentName = (typeof COMPONENT_NAMES)[number];

export interface OptionSpec<T> {
  default: T;
  parser: Parser<T>;
  help: string;
  /** A dedicated environment variable (besides MASAKARI__<GROUP>__<OPTION>). */
  env?: string;
  /** Set when the rule is stricter than Masakari's, saying how. */
  stricterThanMasakari?: string;
}

export type OptionTable = { [G in GroupName]: { [O in keyof Config[G]]-?: OptionSpec<Config[G][O]> } };

/** The options of some groups of the table, as a group file defines them. */
export type OptionGroups<G extends GroupName> = Pick<OptionTable, G>;

export const seconds = (min: number) => integer({ min });

/** The start of the help of every option Masakari does not have. */
export const EXTENSION = 'OpenKeel extension, not in Masakari:';

/** Kubernetes namespace names are DNS-1123 labels. */
export const DNS_LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;
