// OpenAPI 3.0 description of the facade, generated from the same request
// schemas the validator uses (src/domain/schemas.ts), so the document cannot
// drift from what the API accepts. Served at GET /v1/openapi.json without
// authentication: it describes the API, not any data.

import { SCHEMAS } from '../domain/schemas.ts';

type Doc = Record<string, unknown>;

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });

function jsonBody(schema: unknown) {
  return { required: true, content: { 'application/json': { schema } } };
}

function ok(status: string, description: string, schema?: unknown) {
  return {
    [status]: schema ? { description, content: { 'application/json': { schema } } } : { description },
  };
}

const errors = (...codes: number[]) =>
  Object.fromEntries(codes.map((c) => [String(c), { $ref: `#/components/responses/Error${c}` }]));

const listParams = [
  { name: 'limit', in: 'query', schema: { type: 'integer', minimum: 0 } },
  {
    name: 'marker',
    in: 'query',
    description: 'Integer id of the last item of the previous page.',
    schema: { type: 'integer' },
  },
  { name: 'sort_key', in: 'query', schema: { type: 'array', items: { type: 'string' } }, style: 'form', explode: true },
  {
    name: 'sort_dir',
    in: 'query',
    schema: { type: 'array', items: { type: 'string', enum: ['asc', 'desc'] } },
    style: 'form',
    explode: true,
  },
];

const queryFilter = (name: string, type = 'string') => ({ name, in: 'query', schema: { type } });
const pathParam = (name: string) => ({ name, in: 'path', required: true, schema: { type: 'string' } });

const versionHeader = {
  name: 'OpenStack-API-Version',
  in: 'header',
  description: "'instance-ha X.Y' (1.0–1.3) or 'instance-ha latest'; default 1.0.",
  schema: { type: 'string' },
};

/** Strips the draft-specific bits OpenAPI 3.0 does not know (type arrays become nullable/oneOf). */
function toOpenApi(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(toOpenApi);
  if (schema === null || typeof schema !== 'object') return schema;
  const out: Doc = {};
  for (const [k, v] of Object.entries(schema as Doc)) {
    if (k === 'type' && Array.isArray(v)) {
      const types = v.filter((t) => t !== 'null');
      if (types.length === 1) out.type = types[0];
      if (v.includes('null')) out.nullable = true;
      continue;
    }
    out[k] = toOpenApi(v);
  }
  return out;
}

export function buildOpenApiDocument(): Doc {
  const schemas: Doc = Object.fromEntries(Object.entries(SCHEMAS).map(([k, v]) => [k, toOpenApi(v)]));
  schemas.Fault = {
    type: 'object',
    description: '{"<faultName>": {"code": <status>, "message": "<text>"}}',
    additionalProperties: {
      type: 'object',
      properties: { code: { type: 'integer' }, message: { type: 'string' } },
    },
  };
  const responses = Object.fromEntries(
    [400, 403, 404, 405, 406, 409, 413, 415, 500].map((c) => [
      `Error${c}`,
      { description: `Error ${c}`, content: { 'application/json': { schema: ref('Fault') } } },
    ]),
  );
  const obj = { type: 'object' };
  return {
    openapi: '3.0.3',
    info: {
      title: 'Masakari v1 API (masakari-operator)',
      version: '1.3',
      description: 'Masakari instance-ha API, microversions 1.0–1.3, served by masakari-operator.',
    },
    components: {
      schemas,
      responses,
      securitySchemes: { keystone: { type: 'apiKey', in: 'header', name: 'X-Auth-Token' } },
    },
    security: [{ keystone: [] }],
    paths: {
      '/': { get: { summary: 'List API versions', security: [], responses: ok('200', 'Versions', obj) } },
      '/v1': { get: { summary: 'Show API version v1', responses: ok('200', 'Version', obj) } },
      '/v1/extensions': {
        get: { summary: 'List extensions', responses: { ...ok('200', 'Extensions', obj), ...errors(403) } },
      },
      '/v1/extensions/{id}': {
        get: { parameters: [pathParam('id')], responses: { ...ok('200', 'Extension', obj), ...errors(403, 404) } },
      },
      '/v1/segments': {
        get: {
          summary: 'List failover segments',
          parameters: [
            versionHeader,
            ...listParams,
            queryFilter('recovery_method'),
            queryFilter('service_type'),
            queryFilter('enabled', 'boolean'),
          ],
          responses: { ...ok('200', 'Segments', obj), ...errors(400, 403) },
        },
        post: {
          summary: 'Create a failover segment (enabled from 1.2)',
          parameters: [versionHeader],
          requestBody: jsonBody({ oneOf: [ref('segmentCreate'), ref('segmentCreateV12')] }),
          responses: { ...ok('201', 'Created', obj), ...errors(400, 403, 409) },
        },
      },
      '/v1/segments/{segment_id}': {
        parameters: [pathParam('segment_id'), versionHeader],
        get: { responses: { ...ok('200', 'Segment', obj), ...errors(403, 404) } },
        put: {
          requestBody: jsonBody({ oneOf: [ref('segmentUpdate'), ref('segmentUpdateV12')] }),
          responses: { ...ok('200', 'Updated', obj), ...errors(400, 403, 404, 409) },
        },
        delete: { responses: { ...ok('204', 'Deleted'), ...errors(403, 404, 409) } },
      },
      '/v1/segments/{segment_id}/hosts': {
        parameters: [pathParam('segment_id')],
        get: {
          parameters: [
            ...listParams,
            queryFilter('name'),
            queryFilter('type'),
            queryFilter('control_attributes'),
            queryFilter('on_maintenance', 'boolean'),
            queryFilter('reserved', 'boolean'),
          ],
          responses: { ...ok('200', 'Hosts', obj), ...errors(400, 403, 404) },
        },
        post: {
          requestBody: jsonBody(ref('hostCreate')),
          responses: { ...ok('201', 'Created', obj), ...errors(400, 403, 404, 409, 500) },
        },
      },
      '/v1/segments/{segment_id}/hosts/{host_id}': {
        parameters: [pathParam('segment_id'), pathParam('host_id')],
        get: { responses: { ...ok('200', 'Host', obj), ...errors(403, 404) } },
        put: {
          requestBody: jsonBody(ref('hostUpdate')),
          responses: { ...ok('200', 'Updated', obj), ...errors(400, 403, 404, 409) },
        },
        delete: { responses: { ...ok('204', 'Deleted'), ...errors(403, 404, 409) } },
      },
      '/v1/notifications': {
        get: {
          parameters: [
            ...listParams,
            queryFilter('status'),
            queryFilter('source_host_uuid'),
            queryFilter('type'),
            { name: 'generated-since', in: 'query', schema: { type: 'string', format: 'date-time' } },
          ],
          responses: { ...ok('200', 'Notifications', obj), ...errors(400, 403) },
        },
        post: {
          summary: 'Report a failure; the payload follows the type (payloadComputeHost, payloadProcess, payloadVm)',
          requestBody: jsonBody(ref('notificationCreate')),
          responses: { ...ok('202', 'Accepted', obj), ...errors(400, 403, 409) },
        },
      },
      '/v1/notifications/{notification_id}': {
        parameters: [pathParam('notification_id'), versionHeader],
        get: {
          summary: 'Show a notification (1.1+: recovery_workflow_details)',
          responses: { ...ok('200', 'Notification', obj), ...errors(403, 404) },
        },
      },
      '/v1/notifications/{notification_id}/vmoves': {
        parameters: [pathParam('notification_id')],
        get: {
          parameters: [...listParams, queryFilter('status'), queryFilter('type')],
          responses: { ...ok('200', 'VM moves', obj), ...errors(400, 403, 404) },
        },
      },
      '/v1/notifications/{notification_id}/vmoves/{vmove_id}': {
        parameters: [pathParam('notification_id'), pathParam('vmove_id')],
        get: { responses: { ...ok('200', 'VM move', obj), ...errors(400, 403, 404) } },
      },
    },
  };
}
