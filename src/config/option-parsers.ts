// Parsers of single options that need more than parsers.ts's building blocks.

import { parseCatalogInfo } from '../openstack/catalog.ts';
import { InvalidValue, string, type Parser } from './parsers.ts';

/** nova_catalog_admin_info, checked by the parser the Nova client itself uses. */
export function catalogInfo(): Parser<string> {
  const what = '<service_type>:<service_name>:<endpoint_type>, the endpoint type public, internal or admin';
  const text = string({ nonEmpty: true });
  return {
    describe: what,
    parse(raw) {
      const value = text.parse(raw);
      try {
        parseCatalogInfo(value);
      } catch {
        throw new InvalidValue(`must be ${what}`);
      }
      return value;
    },
  };
}

/**
 * Regular expressions from a YAML list, or from a string with one pattern per
 * line (an environment variable): not comma-separated, since a pattern may
 * hold a comma ("a{1,3}"). An invalid pattern fails at startup.
 */
export function patternList(): Parser<RegExp[]> {
  const requirement = 'must be a list of regular expressions (a YAML list, or one per line)';
  return {
    describe: 'list of regular expressions (YAML list, or one per line)',
    parse(raw) {
      let items: unknown[];
      if (raw === null || raw === undefined || raw === '') return [];
      if (typeof raw === 'string') items = raw.split('\n').filter((line) => line.trim() !== '');
      else if (Array.isArray(raw)) items = raw;
      else throw new InvalidValue(requirement);
      return items.map((item) => {
        if (typeof item !== 'string' || item === '') throw new InvalidValue(requirement);
        try {
          return new RegExp(item);
        } catch (err) {
          throw new InvalidValue(`${requirement}; '${item}' is not one: ${(err as Error).message}`);
        }
      });
    },
  };
}
