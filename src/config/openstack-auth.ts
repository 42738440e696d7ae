// OpenStack credentials, found the way the openstack CLI finds them:
//   1. OS_CLOUD names a cloud in clouds.yaml (OS_CLIENT_CONFIG_FILE, then
//      ./clouds.yaml, ~/.config/openstack/clouds.yaml, /etc/openstack/clouds.yaml;
//      the first file that exists is used, with secrets merged from secure.yaml);
//   2. otherwise OS_AUTH_URL and the other OS_* variables;
//   3. otherwise masakari.conf's os_privileged_user_* options;
//   4. otherwise masakari.conf's [keystone_authtoken] service credentials
//      (auth_type password), which keystonemiddleware uses to validate tokens.
// None of them → undefined (no Nova). A source that is chosen but incomplete
// throws OpenStackAuthError naming what is missing, so a half-configured pod
// fails at start rather than at its first recovery.
//
// The result is plain data for the Keystone/Nova client (src/openstack/).

import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { load } from 'js-yaml';
import type { Config } from './config.ts';
import { normalizeInterface, type EndpointInterface } from '../openstack/catalog.ts';
import { isRecord, parseBoolean } from './parsers.ts';

export type { EndpointInterface };

// Field names are clouds.yaml's (auth_url, username, ...), the shape the
// OpenStack client reads (src/openstack/credentials.ts), so no mapping sits
// between the two.

interface CommonCredentials {
  /** Keystone URL as given (with or without /v3). */
  auth_url: string;
  region_name: string | null;
  /** Endpoint interface given by OS_INTERFACE or clouds.yaml; null → nova_catalog_admin_info's. */
  interface: EndpointInterface | null;
  /** CA bundle path for Keystone and Nova. */
  cacert: string | null;
  /** Skip TLS verification. */
  insecure: boolean;
  /** Where these came from, for the startup log; never holds a secret. */
  source: string;
}

export interface PasswordCredentials extends CommonCredentials {
  auth_type: 'password';
  username: string;
  password: string;
  /** Exactly one of user_domain_name / user_domain_id is set. */
  user_domain_name?: string;
  user_domain_id?: string;
  /** Project scope: project_id, or project_name with one of project_domain_name / project_domain_id. */
  project_name?: string;
  project_id?: string;
  project_domain_name?: string;
  project_domain_id?: string;
}

export interface ApplicationCredentials extends CommonCredentials {
  auth_type: 'v3applicationcredential';
  application_credential_secret: string;
  /** Either the id, or the name with username and a user domain. */
  application_credential_id?: string;
  application_credential_name?: string;
  username?: string;
  user_domain_name?: string;
  user_domain_id?: string;
}

export type OpenStackCredentials = PasswordCredentials | ApplicationCredentials;

type AuthFields =
  | Omit<PasswordCredentials, keyof CommonCredentials>
  | Omit<ApplicationCredentials, keyof CommonCredentials>;

export class OpenStackAuthError extends Error {
  constructor(message: string) {
    super(`openstack credentials: ${message}`);
    this.name = 'OpenStackAuthError';
  }
}

export interface ResolveOptions {
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  home?: string;
  /** Returns the file's text, or undefined when it does not exist. */
  readFile?: (path: string) => string | undefined;
}

function readIfExists(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new OpenStackAuthError(`cannot read ${path}: ${(e as Error).message}`);
  }
}

/** Settings of one source, keyed by clouds.yaml's auth names (username, project_name, ...). */
type Settings = Record<string, string | undefined>;

function toInterface(value: string, what: string): EndpointInterface {
  try {
    return normalizeInterface(value);
  } catch {
    throw new OpenStackAuthError(`${what} must be public, internal or admin, got ${JSON.stringify(value)}`);
  }
}

function toBool(value: string | undefined, what: string): boolean | undefined {
  if (value === undefined || value === '') return undefined;
  const b = parseBoolean(value);
  if (b === undefined) throw new OpenStackAuthError(`${what} must be true or false, got ${JSON.stringify(value)}`);
  return b;
}

const AUTH_TYPES: Record<string, AuthFields['auth_type']> = {
  password: 'password',
  v3password: 'password',
  v3applicationcredential: 'v3applicationcredential',
  applicationcredential: 'v3applicationcredential',
  application_credential: 'v3applicationcredential',
};

/**
 * Builds the auth fields from settings named as in clouds.yaml. `name` turns a
 * settings key into what the operator wrote (OS_USERNAME, auth.username, ...)
 * for error messages.
 */
function buildAuth(s: Settings, name: (key: string) => string): AuthFields {
  const rawType = s.auth_type ?? (s.application_credential_secret ? 'v3applicationcredential' : 'password');
  const auth_type = AUTH_TYPES[rawType.toLowerCase()];
  if (!auth_type) {
    throw new OpenStackAuthError(
      `${name('auth_type')} must be password, v3password or v3applicationcredential, got ${JSON.stringify(rawType)}`,
    );
  }
  const need = (key: string): string => {
    const v = s[key];
    if (!v) throw new OpenStackAuthError(`${name(key)} is required for ${rawType} authentication`);
    return v;
  };
  // Without a user domain Keystone cannot find the user; "default" is the id every deployment has.
  const userDomain = (): Pick<PasswordCredentials, 'user_domain_name' | 'user_domain_id'> =>
    s.user_domain_id
      ? { user_domain_id: s.user_domain_id }
      : s.user_domain_name
        ? { user_domain_name: s.user_domain_name }
        : { user_domain_id: 'default' };
  if (auth_type === 'v3applicationcredential') {
    const application_credential_secret = need('application_credential_secret');
    if (s.application_credential_id) {
      return { auth_type, application_credential_secret, application_credential_id: s.application_credential_id };
    }
    if (!s.application_credential_name) {
      throw new OpenStackAuthError(
        `${name('application_credential_id')} or ${name('application_credential_name')} is required for ${rawType} authentication`,
      );
    }
    return {
      auth_type,
      application_credential_secret,
      application_credential_name: s.application_credential_name,
      username: need('username'),
      ...userDomain(),
    };
  }
  const auth: Omit<PasswordCredentials, keyof CommonCredentials> = {
    auth_type,
    username: need('username'),
    password: need('password'),
    ...userDomain(),
  };
  if (s.project_id) auth.project_id = s.project_id;
  else if (s.project_name) {
    auth.project_name = s.project_name;
    if (s.project_domain_id) auth.project_domain_id = s.project_domain_id;
    else if (s.project_domain_name) auth.project_domain_name = s.project_domain_name;
    else auth.project_domain_id = 'default';
  } else {
    throw new OpenStackAuthError(`${name('project_name')} or ${name('project_id')} is required for ${rawType} authentication`);
  }
  return auth;
}

// OS_* variable for each clouds.yaml auth key.
const ENV_NAMES: Record<string, string> = {
  auth_type: 'OS_AUTH_TYPE',
  auth_url: 'OS_AUTH_URL',
  username: 'OS_USERNAME',
  password: 'OS_PASSWORD',
  project_name: 'OS_PROJECT_NAME',
  project_id: 'OS_PROJECT_ID',
  user_domain_name: 'OS_USER_DOMAIN_NAME',
  user_domain_id: 'OS_USER_DOMAIN_ID',
  project_domain_name: 'OS_PROJECT_DOMAIN_NAME',
  project_domain_id: 'OS_PROJECT_DOMAIN_ID',
  application_credential_id: 'OS_APPLICATION_CREDENTIAL_ID',
  application_credential_secret: 'OS_APPLICATION_CREDENTIAL_SECRET',
  application_credential_name: 'OS_APPLICATION_CREDENTIAL_NAME',
};

function fromEnvironment(env: NodeJS.ProcessEnv, config: Config): OpenStackCredentials {
  const s: Settings = {};
  for (const [key, variable] of Object.entries(ENV_NAMES)) s[key] = env[variable] || undefined;
  // Older openrc files name the project a tenant.
  s.project_name ??= env.OS_TENANT_NAME || undefined;
  s.project_id ??= env.OS_TENANT_ID || undefined;
  return {
    ...buildAuth(s, (key) => ENV_NAMES[key] ?? key),
    auth_url: s.auth_url!,
    region_name: env.OS_REGION_NAME || config.DEFAULT.os_region_name,
    interface: env.OS_INTERFACE
      ? toInterface(env.OS_INTERFACE, 'OS_INTERFACE')
      : env.OS_ENDPOINT_TYPE
        ? toInterface(env.OS_ENDPOINT_TYPE, 'OS_ENDPOINT_TYPE')
        : null,
    cacert: env.OS_CACERT || config.DEFAULT.nova_ca_certificates_file,
    insecure: toBool(env.OS_INSECURE, 'OS_INSECURE') ?? config.DEFAULT.nova_api_insecure,
    source: 'OS_* environment variables',
  };
}

function parseCloudsFile(path: string, text: string): Record<string, unknown> {
  let doc: unknown;
  try {
    doc = text.trim() === '' ? {} : load(text);
  } catch (e) {
    throw new OpenStackAuthError(`${path} is not valid YAML: ${(e as Error).message.split('\n')[0]}`);
  }
  if (!isRecord(doc)) throw new OpenStackAuthError(`${path} must be a map with a clouds key`);
  const clouds = doc.clouds ?? {};
  if (!isRecord(clouds)) throw new OpenStackAuthError(`${path}: clouds must be a map of cloud names`);
  return clouds;
}

/** Deep merge of secure.yaml over clouds.yaml, as openstacksdk does. */
function merge(base: Record<string, unknown>, over: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...base };
  for (const [k, v] of Object.entries(over)) {
    const b = out[k];
    out[k] = isRecord(b) && isRecord(v) ? merge(b, v) : v;
  }
  return out;
}

function scalar(v: unknown): string | undefined {
  if (typeof v === 'string') return v || undefined;
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  return undefined;
}

function firstExisting(paths: string[], read: (p: string) => string | undefined): [string, string] | undefined {
  for (const p of paths) {
    const text = read(p);
    if (text !== undefined) return [p, text];
  }
  return undefined;
}

function fromCloudsYaml(cloudName: string, opts: Required<ResolveOptions>, config: Config): OpenStackCredentials {
  const { env, cwd, home, readFile } = opts;
  const dirs = [cwd, join(home, '.config', 'openstack'), '/etc/openstack'];
  const cloudsPaths = [...(env.OS_CLIENT_CONFIG_FILE ? [env.OS_CLIENT_CONFIG_FILE] : []), ...dirs.map((d) => join(d, 'clouds.yaml'))];
  const found = firstExisting(cloudsPaths, readFile);
  if (!found) throw new OpenStackAuthError(`OS_CLOUD=${cloudName} but no clouds.yaml found (looked in ${cloudsPaths.join(', ')})`);
  const [path, text] = found;
  const clouds = parseCloudsFile(path, text);
  const securePaths = [...(env.OS_CLIENT_SECURE_FILE ? [env.OS_CLIENT_SECURE_FILE] : []), ...dirs.map((d) => join(d, 'secure.yaml'))];
  const secure = firstExisting(securePaths, readFile);
  const secureClouds = secure ? parseCloudsFile(secure[0], secure[1]) : {};
  const base = clouds[cloudName];
  if (!isRecord(base)) {
    throw new OpenStackAuthError(
      `OS_CLOUD=${cloudName}: no such cloud in ${path} (clouds: ${Object.keys(clouds).join(', ') || 'none'})`,
    );
  }
  const secrets = secureClouds[cloudName];
  const cloud = isRecord(secrets) ? merge(base, secrets) : base;
  const authBlock = isRecord(cloud.auth) ? cloud.auth : {};
  const s: Settings = {};
  for (const [k, v] of Object.entries(authBlock)) s[k] = scalar(v);
  s.auth_type = scalar(cloud.auth_type);
  if (!s.auth_url) throw new OpenStackAuthError(`cloud ${cloudName} in ${path} has no auth.auth_url`);
  // clouds.yaml `verify: false` skips TLS checks; `verify: <path>` or `cacert` names a CA bundle.
  const verify = cloud.verify;
  const insecureSetting =
    toBool(scalar(cloud.insecure), `cloud ${cloudName} insecure`) ??
    (typeof verify === 'boolean' ? !verify : undefined);
  const cacert = scalar(cloud.cacert) ?? (typeof verify === 'string' ? verify : undefined);
  const iface = scalar(cloud.interface) ?? scalar(cloud.endpoint_type);
  return {
    ...buildAuth(s, (key) => (key === 'auth_type' ? `cloud ${cloudName} auth_type` : `cloud ${cloudName} auth.${key}`)),
    auth_url: s.auth_url,
    region_name: scalar(cloud.region_name) ?? config.DEFAULT.os_region_name,
    interface: iface ? toInterface(iface, `cloud ${cloudName} interface`) : null,
    cacert: cacert ?? config.DEFAULT.nova_ca_certificates_file,
    insecure: insecureSetting ?? config.DEFAULT.nova_api_insecure,
    source: `cloud ${cloudName} in ${path}${secure && isRecord(secrets) ? ` (secrets from ${secure[0]})` : ''}`,
  };
}

function fromMasakariConf(config: Config): OpenStackCredentials {
  const d = config.DEFAULT;
  // A system-scoped token has no project (keystoneauth: "Authentication cannot
  // be scoped to multiple targets"), so the tenant is required only without it.
  const required = d.os_system_scope
    ? (['os_privileged_user_auth_url', 'os_privileged_user_name', 'os_privileged_user_password'] as const)
    : (['os_privileged_user_auth_url', 'os_privileged_user_name', 'os_privileged_user_password', 'os_privileged_user_tenant'] as const);
  const missing = required.filter((o) => !d[o]);
  if (missing.length > 0) {
    throw new OpenStackAuthError(`[DEFAULT] ${missing.join(', ')} must be set when any os_privileged_user_* option is`);
  }
  if (d.os_system_scope && d.os_privileged_user_tenant) {
    throw new OpenStackAuthError(
      '[DEFAULT] os_system_scope and os_privileged_user_tenant are both set: a token is scoped to the system or to a project, not both',
    );
  }
  // Masakari's default domain "default" is the id of Keystone's default domain;
  // sent as a name it only matches where names compare case-insensitively.
  const isDefault = (domain: string) => domain === 'default';
  return {
    auth_type: 'password',
    username: d.os_privileged_user_name!,
    password: d.os_privileged_user_password!,
    ...(isDefault(d.os_user_domain_name) ? { user_domain_id: 'default' } : { user_domain_name: d.os_user_domain_name }),
    ...(d.os_system_scope
      ? { system_scope: d.os_system_scope }
      : {
          project_name: d.os_privileged_user_tenant!,
          ...(isDefault(d.os_project_domain_name)
            ? { project_domain_id: 'default' }
            : { project_domain_name: d.os_project_domain_name }),
        }),
    auth_url: d.os_privileged_user_auth_url!,
    region_name: d.os_region_name,
    interface: null,
    cacert: d.nova_ca_certificates_file,
    insecure: d.nova_api_insecure,
    source: '[DEFAULT] os_privileged_user_* options',
  };
}

function fromKeystoneAuthtoken(config: Config): OpenStackCredentials {
  const k = config.keystone_authtoken;
  const missing = (['auth_url', 'username', 'password', 'project_name'] as const).filter((o) => !k[o]);
  if (missing.length > 0) {
    throw new OpenStackAuthError(
      `[keystone_authtoken] ${missing.join(', ')} must be set when its credentials are the operator's (auth_type password)`,
    );
  }
  // keystoneauth's password plugin reads no domain as none; Keystone's default domain has the id default.
  return {
    auth_type: 'password',
    username: k.username!,
    password: k.password!,
    ...(k.user_domain_name ? { user_domain_name: k.user_domain_name } : { user_domain_id: 'default' }),
    project_name: k.project_name!,
    ...(k.project_domain_name ? { project_domain_name: k.project_domain_name } : { project_domain_id: 'default' }),
    auth_url: k.auth_url!,
    region_name: k.region_name ?? config.DEFAULT.os_region_name,
    interface: null,
    cacert: k.cafile ?? config.DEFAULT.nova_ca_certificates_file,
    insecure: k.insecure || config.DEFAULT.nova_api_insecure,
    source: '[keystone_authtoken] options',
  };
}

function checkAuthUrl(creds: OpenStackCredentials): OpenStackCredentials {
  const ok = URL.canParse(creds.auth_url) && ['http:', 'https:'].includes(new URL(creds.auth_url).protocol);
  if (!ok) throw new OpenStackAuthError(`auth_url from ${creds.source} must be an http(s) URL, got ${JSON.stringify(creds.auth_url)}`);
  return creds;
}

export function resolveOpenStackCredentials(config: Config, opts: ResolveOptions = {}): OpenStackCredentials | undefined {
  const full: Required<ResolveOptions> = {
    env: opts.env ?? process.env,
    cwd: opts.cwd ?? process.cwd(),
    home: opts.home ?? homedir(),
    readFile: opts.readFile ?? readIfExists,
  };
  const { env } = full;
  if (env.OS_CLOUD) return checkAuthUrl(fromCloudsYaml(env.OS_CLOUD, full, config));
  if (env.OS_AUTH_URL) return checkAuthUrl(fromEnvironment(env, config));
  const stray = ['OS_USERNAME', 'OS_PASSWORD', 'OS_APPLICATION_CREDENTIAL_ID', 'OS_APPLICATION_CREDENTIAL_SECRET'].filter(
    (v) => env[v],
  );
  if (stray.length > 0) throw new OpenStackAuthError(`${stray.join(', ')} set but OS_AUTH_URL (or OS_CLOUD) is not`);
  const d = config.DEFAULT;
  const privileged = [d.os_privileged_user_auth_url, d.os_privileged_user_name, d.os_privileged_user_password, d.os_privileged_user_tenant];
  if (privileged.some((v) => v !== null)) return fromMasakariConf(config);
  const k = config.keystone_authtoken;
  if (k.auth_type !== null || (k.username !== null && k.password !== null)) return checkAuthUrl(fromKeystoneAuthtoken(config));
  return undefined;
}
