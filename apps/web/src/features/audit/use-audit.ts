import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { routes } from '@toolport/contract';
import { call } from '../../lib/api';
import { type AuditFilters, auditApiQuery, normalise } from './audit-query';

/** GET /api/audit for one page; quiet, since the page shows its own load failure, and the last page stays while the next loads. */
export function useAudit(filters: AuditFilters, page: number) {
  const applied = normalise(filters);
  return useQuery({
    queryKey: ['audit', applied, page],
    queryFn: ({ signal }) => call(routes.audit.list, { signal, notify: false, query: auditApiQuery(applied, page) }),
    placeholderData: keepPreviousData,
  });
}
