import type { SelfUser } from '@toolport/contract';
import { useTranslation } from 'react-i18next';
import { Card, CardContent, CardDescription, CardHeader, CardTitle } from '../../components/ui/card';

/** Read-only profile of a user who signs in through a provider (docs/console.md §6): the provider owns it. */
export function AccountSummaryCard({ user }: { user: SelfUser }) {
  const { t } = useTranslation('profile');
  const rows: [string, string][] = [
    [t('info.username'), user.username],
    [t('info.email'), user.email || '-'],
    [t('info.display_name'), user.display_name || '-'],
  ];
  return (
    <Card>
      <CardHeader>
        <CardTitle>{t('info.title')}</CardTitle>
        <CardDescription>{t('info.readOnly')}</CardDescription>
      </CardHeader>
      <CardContent>
        <dl className="divide-y divide-slate-100 text-sm dark:divide-slate-800">
          {rows.map(([label, value]) => (
            <div key={label} className="flex justify-between gap-4 py-2">
              <dt className="text-slate-600 dark:text-slate-400">{label}</dt>
              <dd className="truncate font-medium">{value}</dd>
            </div>
          ))}
        </dl>
      </CardContent>
    </Card>
  );
}
