// Turning API server answers and transport failures into KubeError, so every
// caller can branch on .code / .reason exactly as client-go's apierrors do.
import { KubeError } from './client.ts';

/** Reason used for transport failures (no HTTP answer at all); code is 0. */
export const NETWORK_ERROR_REASON = 'NetworkError';
/** Reason used when the per-request timeout fired; code is 0. */
export const TIMEOUT_REASON = 'Timeout';

interface StatusLike {
  kind?: string;
  reason?: string;
  message?: string;
  code?: number;
}

/**
 * Reasons for answers that carry no Status body (a proxy in front of the API
 * server, or a panic page). They mirror apimachinery's StatusReason names so
 * callers need not special-case them.
 */
function reasonForCode(code: number): string {
  switch (code) {
    case 400:
      return 'BadRequest';
    case 401:
      return 'Unauthorized';
    case 403:
      return 'Forbidden';
    case 404:
      return 'NotFound';
    case 405:
      return 'MethodNotAllowed';
    case 406:
      return 'NotAcceptable';
    case 409:
      return 'Conflict';
    case 410:
      return 'Expired';
    case 413:
      return 'RequestEntityTooLarge';
    case 415:
      return 'UnsupportedMediaType';
    case 422:
      return 'Invalid';
    case 429:
      return 'TooManyRequests';
    case 504:
      return 'Timeout';
    case 503:
      return 'ServiceUnavailable';
    default:
      return code >= 500 ? 'InternalError' : 'Unknown';
  }
}

/** Builds the error for a non-2xx answer from its raw body. */
export function errorFromResponse(code: number, bodyText: string, what: string): KubeError {
  let status: StatusLike | undefined;
  try {
    const parsed: unknown = JSON.parse(bodyText);
    if (parsed && typeof parsed === 'object') status = parsed as StatusLike;
  } catch {
    status = undefined;
  }
  const reason = status?.reason || reasonForCode(code);
  const message = status?.message || `${what}: HTTP ${code} ${bodyText.slice(0, 200)}`.trim();
  return new KubeError(code, reason, message, status ?? bodyText);
}

/** Builds the error for a Status carried inside a watch ERROR event. */
export function errorFromStatus(status: unknown, what: string): KubeError {
  const s = (status && typeof status === 'object' ? status : {}) as StatusLike;
  const code = typeof s.code === 'number' ? s.code : 500;
  return new KubeError(code, s.reason || reasonForCode(code), s.message || `${what}: watch error`, status);
}

/** Wraps a transport failure (refused, reset, TLS, timeout) as code 0. */
export function errorFromTransport(err: unknown, what: string, timedOut: boolean): KubeError {
  if (err instanceof KubeError) return err;
  const detail = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
  if (timedOut) return new KubeError(0, TIMEOUT_REASON, `${what}: timed out (${detail})`);
  return new KubeError(0, NETWORK_ERROR_REASON, `${what}: ${detail}`);
}
