// The admission.k8s.io/v1 AdmissionReview wire format: parsing what the API
// server sends (refusing malformed input with a clear message) and building
// the answer. Only the fields this webhook reads are typed.
// Reference: https://kubernetes.io/docs/reference/access-authn-authz/extensible-admission-controllers/

export const ADMISSION_API_VERSION = 'admission.k8s.io/v1';

export type Operation = 'CREATE' | 'UPDATE' | 'DELETE' | 'CONNECT';

export interface AdmissionRequest {
  uid: string;
  kind: { group: string; version: string; kind: string };
  resource: { group: string; version: string; resource: string };
  subResource?: string;
  name?: string;
  namespace?: string;
  operation: Operation;
  userInfo?: { username?: string; uid?: string; groups?: string[] };
  /** The object as it will be stored (CREATE, UPDATE); absent on DELETE. */
  object?: unknown;
  /** The stored object (UPDATE, DELETE). */
  oldObject?: unknown;
  dryRun?: boolean;
  /** CreateOptions / UpdateOptions / DeleteOptions of the request; fieldManager is there for writes. */
  options?: { fieldManager?: string };
}

/** What the rules decide. `code` and `reason` become the Status the API server returns to the client. */
export type Verdict =
  { allowed: true; warnings?: string[] } | { allowed: false; code: number; reason: string; message: string };

export const allow = (warnings: string[] = []): Verdict =>
  warnings.length ? { allowed: true, warnings } : { allowed: true };

export const deny = (code: number, reason: string, message: string): Verdict => ({
  allowed: false,
  code,
  reason,
  message,
});

const OPERATIONS = new Set<Operation>(['CREATE', 'UPDATE', 'DELETE', 'CONNECT']);

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function isGvk(v: unknown, third: 'kind' | 'resource'): boolean {
  return isRecord(v) && typeof v.group === 'string' && typeof v.version === 'string' && typeof v[third] === 'string';
}

/** The request of an AdmissionReview, or a message saying what is wrong with the document. */
export function parseAdmissionReview(body: unknown): { request: AdmissionRequest } | { error: string } {
  if (!isRecord(body)) return { error: 'the body must be a JSON object (an AdmissionReview)' };
  if (body.apiVersion !== ADMISSION_API_VERSION || body.kind !== 'AdmissionReview') {
    return {
      error: `expected apiVersion ${ADMISSION_API_VERSION} and kind AdmissionReview, got ${JSON.stringify(body.apiVersion)} ${JSON.stringify(body.kind)}`,
    };
  }
  const r = body.request;
  if (!isRecord(r)) return { error: 'AdmissionReview.request is missing' };
  if (typeof r.uid !== 'string' || r.uid === '')
    return { error: 'AdmissionReview.request.uid must be a non-empty string' };
  if (typeof r.operation !== 'string' || !OPERATIONS.has(r.operation as Operation)) {
    return { error: `AdmissionReview.request.operation must be one of ${[...OPERATIONS].join(', ')}` };
  }
  if (!isGvk(r.kind, 'kind')) return { error: 'AdmissionReview.request.kind must have group, version and kind' };
  if (!isGvk(r.resource, 'resource')) {
    return { error: 'AdmissionReview.request.resource must have group, version and resource' };
  }
  for (const field of ['object', 'oldObject'] as const) {
    const obj = r[field];
    if (obj === undefined || obj === null) continue;
    if (!isRecord(obj)) return { error: `AdmissionReview.request.${field} must be an object` };
    // What the API server always sends for our kinds; anyone else posting here gets a 400, not a crash.
    if (!isRecord(obj.metadata)) return { error: `AdmissionReview.request.${field}.metadata must be an object` };
    for (const part of ['spec', 'status'] as const) {
      if (obj[part] !== undefined && obj[part] !== null && !isRecord(obj[part])) {
        return { error: `AdmissionReview.request.${field}.${part} must be an object` };
      }
    }
  }
  return { request: r as unknown as AdmissionRequest };
}

/** The AdmissionReview answering `uid`. */
export function admissionResponse(uid: string, verdict: Verdict): Record<string, unknown> {
  const response: Record<string, unknown> = { uid, allowed: verdict.allowed };
  if (verdict.allowed) {
    if (verdict.warnings?.length) response.warnings = verdict.warnings;
  } else {
    response.status = { code: verdict.code, reason: verdict.reason, message: verdict.message };
  }
  return { apiVersion: ADMISSION_API_VERSION, kind: 'AdmissionReview', response };
}
