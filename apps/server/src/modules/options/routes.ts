import { envelope, OkEnvelope, OptionEntry, UpdateOptionRequest } from '@toolport/contract';
import { z } from 'zod';
import type { ZodApi } from '../../http/api.js';
import { ok } from '../../http/locale.js';
import type { OptionsService } from './service.js';

export async function optionRoutes(api: ZodApi, options: OptionsService): Promise<void> {
  api.get(
    '/option/',
    {
      config: { auth: 'admin' },
      schema: { tags: ['options'], summary: 'Every preference (secrets masked)', response: { 200: envelope(z.array(OptionEntry)) } },
    },
    async (_req, reply) => ok(reply, options.list()),
  );

  const update = {
    config: { auth: 'admin' as const },
    schema: { tags: ['options'], summary: 'Set one preference', body: UpdateOptionRequest, response: { 200: OkEnvelope } },
  };
  api.put('/option/', update, async (req, reply) => {
    await options.set(req.body.key, req.body.value);
    return ok(reply, undefined, req.t('option.saved'));
  });
}
