// What the OpenStack client needs to log in to Keystone v3. Field names are
// clouds.yaml / OS_* names (auth_url, username, application_credential_id,
// ...), so values from a clouds.yaml or from masakari.conf's
// os_privileged_user_* options map one to one.
//
// The config loader (src/config/openstack-auth.ts) produces values of this
// shape; this module only states the subset the client reads, so the two stay
// structurally compatible.

interface CommonCredentials {
  /** Keystone URL, with or without the trailing /v3 (both are accepted). */
  auth_url: string;
  region_name?: string | null;
  /** Endpoint interface for catalog lookups: public | internal | admin (publicURL etc. accepted). */
  interface?: string | null;
  /** PEM file with the CA bundle for TLS verification. */
  cacert?: string | null;
  /** Skip TLS verification (test clouds only). */
  insecure?: boolean;
}

export interface PasswordCredentials extends CommonCredentials {
  auth_type?: 'password';
  username: string;
  password: string;
  project_name?: string | null;
  project_id?: string | null;
  user_domain_name?: string | null;
  user_domain_id?: string | null;
  project_domain_name?: string | null;
  project_domain_id?: string | null;
  /** 'all' requests a system-scoped token instead of a project-scoped one. */
  system_scope?: string | null;
}

export interface ApplicationCredentials extends CommonCredentials {
  auth_type?: 'v3applicationcredential';
  /** Either the id, or the name together with the owning user. */
  application_credential_id?: string | null;
  application_credential_name?: string | null;
  username?: string | null;
  user_id?: string | null;
  user_domain_name?: string | null;
  user_domain_id?: string | null;
  application_credential_secret: string;
}

export type OpenStackCredentials = PasswordCredentials | ApplicationCredentials;

export function isApplicationCredentials(c: OpenStackCredentials): c is ApplicationCredentials {
  return c.auth_type === 'v3applicationcredential' || 'application_credential_secret' in c;
}
