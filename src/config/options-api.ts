// The API's options: [oslo_policy], [oslo_middleware], [wsgi] and
// [keystone_authtoken] (keystonemiddleware's auth_token, with its OpenKeel extensions).

import { boolean, integer, oneOf, optional, string, url } from './parsers.ts';
import { type OptionGroups } from './option-spec.ts';

export const API_OPTIONS: OptionGroups<'oslo_policy' | 'oslo_middleware' | 'wsgi' | 'keystone_authtoken'> = {
  oslo_policy: {
    policy_file: {
      default: null,
      parser: optional(string({ nonEmpty: true })),
      env: 'MASAKARI_POLICY_FILE',
      help: 'YAML or JSON file of policy rules overriding the built-in defaults.',
    },
  },
  oslo_middleware: {
    enable_proxy_headers_parsing: {
      default: false,
      parser: boolean(),
      help: 'Take the scheme, host and path prefix of links from Forwarded, or X-Forwarded-Proto, X-Forwarded-Host and X-Forwarded-Prefix (set it only behind a proxy that sets them).',
    },
  },
  wsgi: {
    ssl_cert_file: {
      default: null,
      parser: optional(string({ nonEmpty: true })),
      help: 'PEM certificate (chain) of the API, with use_ssl.',
    },
    ssl_key_file: {
      default: null,
      parser: optional(string({ nonEmpty: true })),
      help: 'PEM private key of the API, with use_ssl.',
    },
    ssl_ca_file: {
      default: null,
      parser: optional(string({ nonEmpty: true })),
      help: 'With use_ssl: CA bundle that client certificates must chain to; set, a client without one is refused.',
    },
  },
  keystone_authtoken: {
    auth_type: {
      default: null,
      parser: optional(oneOf(['password', 'v3password'])),
      help: "keystonemiddleware's auth plugin; with auth_url, username and password set, these credentials are used when no other OpenStack credentials are (OS_CLOUD, OS_AUTH_URL, os_privileged_user_*).",
    },
    auth_url: {
      default: null,
      parser: optional(url()),
      help: 'Keystone URL of the service credentials below.',
    },
    username: {
      default: null,
      parser: optional(string({ nonEmpty: true })),
      help: 'Service user that validates tokens (used as said under auth_type).',
    },
    password: {
      default: null,
      parser: optional(string({ nonEmpty: true })),
      help: 'Password of username. Prefer MASAKARI__KEYSTONE_AUTHTOKEN__PASSWORD from a Secret.',
    },
    project_name: {
      default: null,
      parser: optional(string({ nonEmpty: true })),
      help: 'Project of username.',
    },
    user_domain_name: {
      default: null,
      parser: optional(string({ nonEmpty: true })),
      help: 'Domain of username; unset: the domain with id default.',
    },
    project_domain_name: {
      default: null,
      parser: optional(string({ nonEmpty: true })),
      help: 'Domain of project_name; unset: the domain with id default.',
    },
    cafile: {
      default: null,
      parser: optional(string({ nonEmpty: true })),
      help: 'CA bundle for Keystone and Nova when these credentials are used.',
    },
    insecure: {
      default: false,
      parser: boolean(),
      help: 'Skip TLS verification when these credentials are used.',
    },
    token_cache_time: {
      default: 300,
      parser: integer({ min: -1 }),
      help: 'Longest time (seconds) a validated token is cached; -1 disables the cache, as in keystonemiddleware.',
    },
    www_authenticate_uri: {
      default: null,
      parser: optional(url()),
      help: "Keystone URL clients are sent to in WWW-Authenticate on a 401 (keystonemiddleware's option); unset, the operator's own auth_url, which may be an internal one.",
    },
    interface: {
      default: 'public',
      parser: oneOf(['public', 'internal', 'admin']),
      help: 'Keystone endpoint interface used to validate tokens.',
    },
    region_name: {
      default: null,
      parser: optional(string({ nonEmpty: true })),
      help: 'Region of the Keystone endpoint used to validate tokens.',
    },
    http_connect_timeout: {
      default: null,
      parser: optional(integer({ min: 1 })),
      help: "Timeout (seconds) of each token validation request (keystonemiddleware's option); null: operator.openstack_request_timeout, as keystonemiddleware's own unset value would mean no timeout at all.",
    },
    http_request_max_retries: {
      default: 3,
      parser: integer({ min: 0, max: 10 }),
      help: "Retries of a token validation request after a timeout, connection error or 5xx (keystonemiddleware's option).",
    },
    token_cache_size: {
      default: 1000,
      parser: integer({ min: 1 }),
      help: 'OpenKeel extension: Valid tokens remembered (least recently used goes first); invalid ones are kept apart and cannot evict them.',
    },
    invalid_token_cache_time: {
      default: 10,
      parser: integer({ min: 0 }),
      help: 'OpenKeel extension: Seconds an invalid token is remembered, so that it is not sent to Keystone again (at most token_cache_time; 0: not remembered).',
    },
    invalid_token_cache_size: {
      default: 10000,
      parser: integer({ min: 1 }),
      help: 'OpenKeel extension: Invalid tokens remembered, in a cache of their own.',
    },
    max_validations_in_flight: {
      default: 20,
      parser: integer({ min: 1 }),
      help: 'OpenKeel extension: Token validations waiting on Keystone at once (one per distinct unseen token; requests with the same token share one). A request that would need one more is answered 503 with Retry-After: 1.',
    },
    max_validations_per_second: {
      default: 50,
      parser: integer({ min: 1 }),
      help: 'OpenKeel extension: Token validations started per second on average (bursts up to max(max_validations_in_flight, this)); beyond it, 503 with Retry-After: 1.',
    },
  },
};
