import { useTranslation } from 'react-i18next';
import { Badge } from '../../components/ui/badge';
import { Card, CardContent, CardHeader, CardTitle } from '../../components/ui/card';
import { Table, TableBody, TableCell, TableHead, TableHeader, TableRow } from '../../components/ui/table';

/** Static sample rows (docs/console.md §2.4): the table shows what activity will look like, not real requests. */
const sampleRows = [
  { minutesAgo: 2, service: 'filesystem', tool: 'read_file', ok: true },
  { minutesAgo: 14, service: 'fetch', tool: 'fetch', ok: true },
  { minutesAgo: 38, service: 'github', tool: 'search_repositories', ok: false },
  { minutesAgo: 95, service: 'memory', tool: 'create_entities', ok: true },
];

function useRelativeTime() {
  const { i18n } = useTranslation();
  const format = new Intl.RelativeTimeFormat(i18n.language, { numeric: 'auto' });
  return (minutesAgo: number) =>
    minutesAgo < 60 ? format.format(-minutesAgo, 'minute') : format.format(-Math.floor(minutesAgo / 60), 'hour');
}

export function RecentActivityTable() {
  const { t } = useTranslation('dashboard');
  const ago = useRelativeTime();
  return (
    <Card>
      <CardHeader className="flex-row items-center justify-between">
        <CardTitle>{t('activity.title')}</CardTitle>
        <Badge>{t('activity.sample')}</Badge>
      </CardHeader>
      <CardContent>
        <Table stackBelow="lg">
          <TableHeader>
            <TableRow>
              <TableHead>{t('activity.time')}</TableHead>
              <TableHead>{t('activity.service')}</TableHead>
              <TableHead>{t('activity.tool')}</TableHead>
              <TableHead>{t('activity.status')}</TableHead>
            </TableRow>
          </TableHeader>
          <TableBody>
            {sampleRows.map((row) => (
              <TableRow key={`${row.service}-${row.minutesAgo}`}>
                <TableCell label={t('activity.time')} className="whitespace-nowrap text-slate-600 dark:text-slate-400">
                  {ago(row.minutesAgo)}
                </TableCell>
                <TableCell label={t('activity.service')} className="font-medium">
                  {row.service}
                </TableCell>
                <TableCell label={t('activity.tool')} className="font-mono text-xs">
                  {row.tool}
                </TableCell>
                <TableCell label={t('activity.status')}>
                  <Badge tone={row.ok ? 'success' : 'danger'}>{row.ok ? t('activity.success') : t('activity.failed')}</Badge>
                </TableCell>
              </TableRow>
            ))}
          </TableBody>
        </Table>
      </CardContent>
    </Card>
  );
}
