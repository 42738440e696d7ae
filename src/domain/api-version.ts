// Microversions of the instance-ha API (masakari/api/api_version_request.py).

import * as msg from './messages.ts';

export interface ApiVersion {
  major: number;
  minor: number;
}

export const MIN_API_VERSION: ApiVersion = { major: 1, minor: 0 };
export const MAX_API_VERSION: ApiVersion = { major: 1, minor: 3 };
export const DEFAULT_API_VERSION: ApiVersion = MIN_API_VERSION;

export function versionString(v: ApiVersion): string {
  return `${v.major}.${v.minor}`;
}

export function compareVersions(a: ApiVersion, b: ApiVersion): number {
  return a.major - b.major || a.minor - b.minor;
}

export function atLeast(v: ApiVersion, major: number, minor: number): boolean {
  return compareVersions(v, { major, minor }) >= 0;
}

export class InvalidApiVersionString extends Error {
  constructor(version: string) {
    super(msg.invalidApiVersionString(version));
  }
}

export class UnsupportedApiVersion extends Error {
  constructor(readonly version: ApiVersion) {
    super(
      msg.invalidGlobalApiVersion(
        versionString(version),
        versionString(MIN_API_VERSION),
        versionString(MAX_API_VERSION),
      ),
    );
  }
}

/** APIVersionRequest('X.Y'): majors start at 1, no leading zeros. */
export function parseApiVersion(text: string): ApiVersion {
  const m = /^([1-9]\d*)\.([1-9]\d*|0)$/.exec(text);
  if (!m) throw new InvalidApiVersionString(text);
  return { major: Number(m[1]), minor: Number(m[2]) };
}

/**
 * The version a request asks for: absent → 1.0, 'latest' → 1.3, otherwise
 * parsed and checked against the supported range (wsgi.py set_api_version_request).
 */
export function resolveApiVersion(requested: string | undefined): ApiVersion {
  if (requested === undefined) return DEFAULT_API_VERSION;
  if (requested === 'latest') return MAX_API_VERSION;
  const v = parseApiVersion(requested);
  if (compareVersions(v, MIN_API_VERSION) < 0 || compareVersions(v, MAX_API_VERSION) > 0)
    throw new UnsupportedApiVersion(v);
  return v;
}
