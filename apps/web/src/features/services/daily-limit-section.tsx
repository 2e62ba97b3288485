import { useQueryClient } from '@tanstack/react-query';
import { type InstalledService, routes } from '@toolport/contract';
import { useId, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { Button } from '../../components/ui/button';
import { Input } from '../../components/ui/input';
import { Label } from '../../components/ui/label';
import { ApiError, call } from '../../lib/api';
import { showFailure } from '../../lib/failure';
import { patchService } from '../../lib/installed-services';
import { notify } from '../../lib/notify';
import { integerIdOf } from '../../lib/service-ids';
import { hasDailyLimit, parseDailyLimit, remainingAfter } from './usage';
import { UsageBar } from './usage-bar';

/**
 * Requests per day (docs/console.md §2.6, §5): a whole number, 0 = unlimited, anything not a number counts
 * as 0. Admins change it (the server allows no one else); the remaining count is recomputed locally.
 */
export function DailyLimitSection({ service, admin }: { service: InstalledService; admin: boolean }) {
  const { t } = useTranslation('services');
  const id = useId();
  const queryClient = useQueryClient();
  const [value, setValue] = useState(String(service.rpd_limit || 0));
  const [saving, setSaving] = useState(false);

  const update = async () => {
    const limit = parseDailyLimit(value);
    setValue(String(limit));
    setSaving(true);
    try {
      await call(routes.services.update, { params: { id: integerIdOf(service.id) }, body: { rpd_limit: limit }, notify: false });
      await patchService(queryClient, service.id, {
        rpd_limit: limit,
        remaining_requests: remainingAfter(limit, service.user_daily_request_count),
      });
      notify.success(t('limit.updatedTitle'), limit > 0 ? t('limit.updated', { limit }) : t('limit.updatedUnlimited'));
    } catch (err) {
      // A refused limit gets the translated updateFailed message (docs/console.md §8); the rest the usual texts.
      const refused = !(err instanceof ApiError) || err.kind === 'other' || err.kind === 'notFound';
      if (refused) notify.error(t('toasts.updateFailed'), t('limit.updateFailed'));
      else showFailure(err, t, { failed: t('toasts.updateFailed'), error: t('toasts.updateFailed'), fallback: t('limit.updateFailed') });
    } finally {
      setSaving(false);
    }
  };

  return (
    <section aria-labelledby={`${id}-title`} className="space-y-3 border-t border-slate-200 pt-4 dark:border-slate-800">
      <h3 id={`${id}-title`} className="text-sm font-medium">
        {t('limit.title')}
      </h3>
      {hasDailyLimit(service.rpd_limit) && (
        <UsageBar count={service.user_daily_request_count} limit={service.rpd_limit} remaining={service.remaining_requests} />
      )}
      {admin ? (
        <form
          className="flex flex-wrap items-end gap-2"
          onSubmit={(e) => {
            e.preventDefault();
            void update();
          }}
        >
          <div className="min-w-40 flex-1 space-y-2">
            <Label htmlFor={`${id}-limit`}>{t('limit.label')}</Label>
            <Input
              id={`${id}-limit`}
              type="number"
              inputMode="numeric"
              min={0}
              step={1}
              value={value}
              aria-describedby={`${id}-hint`}
              onChange={(e) => setValue(e.target.value)}
            />
          </div>
          <Button type="submit" disabled={saving}>
            {saving ? t('limit.updating') : t('limit.update')}
          </Button>
          <p id={`${id}-hint`} className="w-full text-xs text-slate-600 dark:text-slate-400">
            {t('limit.hint')}
          </p>
        </form>
      ) : (
        <p className="text-sm text-slate-600 dark:text-slate-400">
          {t('limit.current', { limit: service.rpd_limit > 0 ? service.rpd_limit : t('limit.unlimited') })} · {t('limit.readOnly')}
        </p>
      )}
    </section>
  );
}
