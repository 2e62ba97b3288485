import { AUDIT_PAGE_SIZE, routes } from '@toolport/contract';
import { Download } from 'lucide-react';
import { useEffect, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { useSearchParams } from 'react-router';
import { PageHeader } from '../../components/page-header';
import { Pager } from '../../components/pager';
import { Button } from '../../components/ui/button';
import { Card, CardContent } from '../../components/ui/card';
import { ApiError, callFile } from '../../lib/api';
import { failureText } from '../../lib/failure';
import { notify } from '../../lib/notify';
import { pageCount, shownRange } from '../../lib/pagination';
import { useErrorToast } from '../../lib/use-error-toast';
import { AuditFiltersForm } from './audit-filters';
import { type AuditFilters, auditApiFilter, hasFilters, readAuditSearch, writeAuditSearch } from './audit-query';
import { AuditTable, type AuditTableState } from './audit-table';
import { useAudit } from './use-audit';

/**
 * The Audit screen, admins only: who changed what, sign-ins and refused sign-ins, newest first. Built like the
 * Logs screen (filters and page in the address, the same pager); Export saves the filtered trail as JSON lines.
 */
export function AuditPage() {
  const { t } = useTranslation('audit');
  const [params, setParams] = useSearchParams();
  const { filters, page } = readAuditSearch(params);
  const audit = useAudit(filters, page);
  const data = audit.data;
  const pages = pageCount(data?.total ?? 0, AUDIT_PAGE_SIZE);
  const pastTheEnd = data && !audit.isPlaceholderData && data.entries.length === 0 && pages > 0 && page > pages;
  const lastPageSearch = pastTheEnd ? writeAuditSearch(filters, pages).toString() : undefined;
  const [exporting, setExporting] = useState(false);

  const show = (next: AuditFilters, nextPage: number) => {
    const search = writeAuditSearch(next, nextPage);
    if (search.toString() === writeAuditSearch(filters, page).toString()) void audit.refetch();
    else setParams(search);
  };

  useErrorToast(audit.error, (error) => {
    if (error instanceof ApiError && (error.kind === 'unauthorized' || error.kind === 'aborted')) return;
    notify.error(t('loadFailed'), failureText(error, t));
  });

  useEffect(() => {
    if (lastPageSearch !== undefined) setParams(new URLSearchParams(lastPageSearch), { replace: true });
  }, [lastPageSearch, setParams]);

  const exportLines = async () => {
    setExporting(true);
    try {
      const blob = await callFile(routes.audit.export, auditApiFilter(filters), { notify: false });
      const url = URL.createObjectURL(blob);
      const link = document.createElement('a');
      link.href = url;
      link.download = `toolport-audit-${new Date().toISOString().slice(0, 10)}.jsonl`;
      document.body.append(link);
      link.click();
      link.remove();
      URL.revokeObjectURL(url);
    } catch (error) {
      if (!(error instanceof ApiError && error.kind === 'unauthorized')) notify.error(t('exportFailed'), failureText(error, t));
    } finally {
      setExporting(false);
    }
  };

  let state: AuditTableState;
  if (audit.isError) state = { kind: 'failed', reason: failureText(audit.error, t), onRetry: () => void audit.refetch() };
  else if (!data) state = { kind: 'loading' };
  else state = { kind: 'loaded', rows: data.entries, filtered: hasFilters(filters), refreshing: audit.isFetching };

  const range = data && !audit.isError ? shownRange(data.page, AUDIT_PAGE_SIZE, data.entries.length, data.total) : null;

  return (
    <section className="space-y-6">
      <PageHeader
        title={t('title')}
        description={t('description')}
        actions={
          <Button variant="outline" onClick={() => void exportLines()} disabled={exporting}>
            <Download aria-hidden="true" />
            {t('export')}
          </Button>
        }
      />
      <Card>
        <CardContent className="pt-5">
          <AuditFiltersForm applied={filters} onSearch={(next) => show(next, 1)} />
        </CardContent>
      </Card>
      <Card>
        <CardContent className="space-y-4 pt-3">
          <AuditTable state={state} />
          {range && <Pager page={page} pages={pages} range={range} onPage={(next) => show(filters, next)} />}
        </CardContent>
      </Card>
    </section>
  );
}
