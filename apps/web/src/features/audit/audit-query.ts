import { AUDIT_PAGE_SIZE, type AuditObjectType, auditObjectTypes, MAX_AUDIT_FILTER_LENGTH, MAX_PAGE } from '@toolport/contract';

/** The Audit filters as the form and the address hold them: '' (or 'all') means no filter. */
export interface AuditFilters {
  /** A username, or a user id. */
  actor: string;
  objectType: AuditObjectType | 'all';
  objectId: string;
  /** `YYYY-MM-DDTHH:mm` in the browser's time zone, as a datetime-local field holds it. */
  since: string;
  until: string;
}

export const noAuditFilters: AuditFilters = { actor: '', objectType: 'all', objectId: '', since: '', until: '' };

export const FILTER_MAX = MAX_AUDIT_FILTER_LENGTH;

const isObjectType = (v: string | null): v is AuditObjectType => auditObjectTypes.includes(v as AuditObjectType);
const LOCAL_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}$/;

/** A datetime-local value as epoch milliseconds in the browser's zone; undefined when blank or not a time. */
export function instantOf(local: string): number | undefined {
  if (!LOCAL_TIME.test(local)) return undefined;
  const ms = new Date(local).getTime();
  return Number.isNaN(ms) ? undefined : ms;
}

/** The one thing the form refuses before asking the server: an end before the start. */
export function rangeError(f: AuditFilters): 'untilBeforeSince' | undefined {
  const since = instantOf(f.since);
  const until = instantOf(f.until);
  return since !== undefined && until !== undefined && until <= since ? 'untilBeforeSince' : undefined;
}

export function normalise(f: AuditFilters): AuditFilters {
  return {
    actor: f.actor.trim().slice(0, FILTER_MAX),
    objectType: f.objectType,
    objectId: f.objectId.trim().slice(0, FILTER_MAX),
    since: instantOf(f.since) === undefined ? '' : f.since,
    until: instantOf(f.until) === undefined ? '' : f.until,
  };
}

/** Filters and page from the page's address; anything the server would refuse counts as not set. */
export function readAuditSearch(params: URLSearchParams): { filters: AuditFilters; page: number } {
  const type = params.get('object_type');
  const page = Number(params.get('page'));
  return {
    filters: normalise({
      actor: params.get('actor') ?? '',
      objectType: isObjectType(type) ? type : 'all',
      objectId: params.get('object_id') ?? '',
      since: params.get('since') ?? '',
      until: params.get('until') ?? '',
    }),
    page: Number.isInteger(page) && page >= 1 ? Math.min(page, MAX_PAGE) : 1,
  };
}

function setEntries(filters: AuditFilters): [string, string][] {
  const f = normalise(filters);
  const entries: [string, string][] = [];
  if (f.actor) entries.push(['actor', f.actor]);
  if (f.objectType !== 'all') entries.push(['object_type', f.objectType]);
  if (f.objectId) entries.push(['object_id', f.objectId]);
  if (f.since) entries.push(['since', f.since]);
  if (f.until) entries.push(['until', f.until]);
  return entries;
}

/** The page's address for these filters and page (page 1 is left out). */
export function writeAuditSearch(filters: AuditFilters, page: number): URLSearchParams {
  const params = new URLSearchParams(setEntries(filters));
  if (page > 1) params.set('page', String(page));
  return params;
}

/** The filters as GET /api/audit reads them: the times as epoch milliseconds. */
export function auditApiFilter(filters: AuditFilters): Record<string, string | number> {
  const out: Record<string, string | number> = {};
  for (const [key, value] of setEntries(filters)) out[key] = key === 'since' || key === 'until' ? (instantOf(value) as number) : value;
  return out;
}

export function auditApiQuery(filters: AuditFilters, page: number): Record<string, string | number> {
  return { page, page_size: AUDIT_PAGE_SIZE, ...auditApiFilter(filters) };
}

export const hasFilters = (filters: AuditFilters): boolean => setEntries(filters).length > 0;
