// masakari/api/openstack/ha/versions.py: the root application ('/' lists the
// versions, any other path outside /v1 and /healthcheck offers the choices
// with a 300) and, under /v1, the v1.0 version document (VersionsController).

import { MasakariError } from '../../domain/errors.ts';
import * as msg from '../../domain/messages.ts';
import type { Reply } from '../replies.ts';
import { faultReply, jsonReply } from '../replies.ts';
import { versionsChoices, versionShow, versionsIndex } from '../views.ts';
import type { Incoming } from '../wsgi-request.ts';
import {
  decodeUtf8,
  hasUnsupportedContentType,
  headerValue,
  readBody,
  requotePath,
  responseContentType,
} from '../wsgi-request.ts';
import type { Controller } from './controller.ts';

export function versionsController(): Controller {
  return {
    show: ({ req, id }) => {
      if (id !== '' && id !== 'v1.0') throw new MasakariError(404, msg.resourceNotFound());
      return { status: 200, doc: versionShow(req.v1Url) };
    },
  };
}

/** The root application's answer; a POST or PUT body is still read and must be JSON (wsgi.py Resource). */
export async function rootVersionsReply(req: Incoming, limit: number): Promise<Reply> {
  if (req.method === 'POST' || req.method === 'PUT') {
    if (hasUnsupportedContentType(req)) return faultReply(415, msg.unsupportedContentType());
    const raw = await readBody(req.raw, limit).catch(() => Buffer.alloc(0));
    if (headerValue(req, 'content-length') !== '0') {
      try {
        JSON.parse(decodeUtf8(raw));
      } catch (_e) {
        return faultReply(400, msg.malformedRequestBody());
      }
    }
  }
  if (req.path === '/') return jsonReply(200, versionsIndex(req.baseUrl), responseContentType(req));
  return jsonReply(300, versionsChoices(req.baseUrl, requotePath(req.path)), responseContentType(req));
}
