// masakari/api/openstack/ha/extension_info.py ExtensionInfoController: the
// extensions the caller's policy lets it discover.

import { MasakariError } from '../../domain/errors.ts';
import * as msg from '../../domain/messages.ts';
import type { RequestContext } from '../auth.ts';
import { MASAKARI_API } from '../policy.ts';
import { ROUTE_RESOURCES } from '../routes.ts';
import { EXTENSIONS, extensionView } from '../views.ts';
import type { Controller, ControllerDeps } from './controller.ts';
import { policyFor } from './controller.ts';

export function extensionsController({ policy }: ControllerDeps): Controller {
  const { authorize, check } = policyFor(policy, ROUTE_RESOURCES.extensions.alias);
  const discoverable = (ctx: RequestContext) =>
    EXTENSIONS.filter((e) => check(ctx, `${MASAKARI_API}:${e.alias}:discoverable`));
  return {
    index: ({ ctx }) => {
      authorize(ctx, 'index');
      return { status: 200, doc: { extensions: discoverable(ctx).map(extensionView) } };
    },
    show: ({ ctx, id }) => {
      authorize(ctx, 'detail');
      const ext = discoverable(ctx).find((e) => e.alias === id);
      if (!ext) throw new MasakariError(404, msg.resourceNotFound());
      return { status: 200, doc: { extension: extensionView(ext) } };
    },
  };
}
