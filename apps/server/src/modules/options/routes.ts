import { endpoints } from '@toolport/contract';
import type { ZodApi } from '../../http/api.js';
import { route } from '../../http/endpoints.js';
import { ok } from '../../http/locale.js';
import type { OptionsService } from './service.js';

export async function optionRoutes(api: ZodApi, options: OptionsService): Promise<void> {
  route(api, endpoints.options.list, async (_req, reply) => ok(reply, options.list()));

  route(api, endpoints.options.update, async (req, reply) => {
    await options.set(req.body.key, req.body.value);
    return ok(reply, undefined, req.t('option.saved'));
  });
}
