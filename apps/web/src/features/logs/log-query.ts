import { LOGS_PAGE_SIZE, MAX_ID, MAX_PAGE, MAX_SERVICE_NAME_FILTER_LENGTH } from '@toolport/contract';

export const logPhases = ['install', 'run'] as const;
export const logLevels = ['info', 'warn', 'error'] as const;
export type LogPhase = (typeof logPhases)[number];
export type LogLevel = (typeof logLevels)[number];

/** The server's limit for the service-name filter. */
export const SERVICE_NAME_MAX = MAX_SERVICE_NAME_FILTER_LENGTH;

/** The Logs filters (docs/console.md §2.15) as the form and the address hold them: '' or 'all' means no filter. */
export interface LogFilters {
  serviceId: string;
  serviceName: string;
  phase: LogPhase | 'all';
  level: LogLevel | 'all';
}

export const noFilters: LogFilters = { serviceId: '', serviceName: '', phase: 'all', level: 'all' };

const isPhase = (value: string | null): value is LogPhase => logPhases.includes(value as LogPhase);
const isLevel = (value: string | null): value is LogLevel => logLevels.includes(value as LogLevel);

/** A service id as typed: blank (no filter), a whole number the server accepts, or neither. */
export function serviceIdError(text: string): 'invalidServiceId' | undefined {
  const trimmed = text.trim();
  if (trimmed === '') return undefined;
  return /^\d+$/.test(trimmed) && Number(trimmed) <= MAX_ID ? undefined : 'invalidServiceId';
}

/** The filters trimmed and the id without leading zeros, so that equal searches look equal; a bad id counts as none. */
export function normalise(filters: LogFilters): LogFilters {
  const id = filters.serviceId.trim();
  return {
    serviceId: id === '' || serviceIdError(id) ? '' : String(Number(id)),
    serviceName: filters.serviceName.trim().slice(0, SERVICE_NAME_MAX),
    phase: filters.phase,
    level: filters.level,
  };
}

/** Filters and page from the page's address; anything the server would refuse counts as not set. */
export function readLogSearch(params: URLSearchParams): { filters: LogFilters; page: number } {
  const phase = params.get('phase');
  const level = params.get('level');
  const page = Number(params.get('page'));
  return {
    filters: normalise({
      serviceId: params.get('service_id') ?? '',
      serviceName: params.get('service_name') ?? '',
      phase: isPhase(phase) ? phase : 'all',
      level: isLevel(level) ? level : 'all',
    }),
    page: Number.isInteger(page) && page >= 1 ? Math.min(page, MAX_PAGE) : 1,
  };
}

/** Only what is set, so that an unfiltered first page has a bare address and request. */
function setEntries(filters: LogFilters): [string, string][] {
  const f = normalise(filters);
  const entries: [string, string][] = [];
  if (f.serviceId) entries.push(['service_id', f.serviceId]);
  if (f.serviceName) entries.push(['service_name', f.serviceName]);
  if (f.phase !== 'all') entries.push(['phase', f.phase]);
  if (f.level !== 'all') entries.push(['level', f.level]);
  return entries;
}

/** The page's address for these filters and page (page 1 is left out). */
export function writeLogSearch(filters: LogFilters, page: number): URLSearchParams {
  const params = new URLSearchParams(setEntries(filters));
  if (page > 1) params.set('page', String(page));
  return params;
}

/** The query of GET /api/mcp_logs (docs/console.md §7): page, page_size 20 and the filters that are set. */
export function logsApiQuery(filters: LogFilters, page: number): Record<string, string | number> {
  return { page, page_size: LOGS_PAGE_SIZE, ...Object.fromEntries(setEntries(filters)) };
}

export const hasFilters = (filters: LogFilters): boolean => setEntries(filters).length > 0;
