import { describe, expect, it } from 'vitest';
import { hasFilters, type LogFilters, logsApiQuery, noFilters, readLogSearch, serviceIdError, writeLogSearch } from './log-query';

const filters = (overrides: Partial<LogFilters>): LogFilters => ({ ...noFilters, ...overrides });

describe('log filters and the query they send', () => {
  it.each(['', '  ', '0', '7', ' 42 ', '007', '2147483647'])('service id %j is accepted', (text) => {
    expect(serviceIdError(text)).toBeUndefined();
  });

  it.each(['abc', '-1', '1.5', '1e3', '+3', '2147483648', '3 4'])('service id %j is refused', (text) => {
    expect(serviceIdError(text)).toBe('invalidServiceId');
  });

  it('sends page and page_size 20 alone when nothing is chosen; "all" is no filter', () => {
    expect(logsApiQuery(noFilters, 1)).toEqual({ page: 1, page_size: 20 });
    expect(hasFilters(noFilters)).toBe(false);
  });

  it('sends every chosen filter, trimmed, with the id as a plain number', () => {
    const chosen = filters({ serviceId: ' 007 ', serviceName: '  weather ', phase: 'install', level: 'error' });
    expect(logsApiQuery(chosen, 3)).toEqual({
      page: 3,
      page_size: 20,
      service_id: '7',
      service_name: 'weather',
      phase: 'install',
      level: 'error',
    });
    expect(hasFilters(chosen)).toBe(true);
    expect(logsApiQuery(filters({ serviceName: '   ' }), 1)).toEqual({ page: 1, page_size: 20 });
    expect(logsApiQuery(filters({ serviceId: '0' }), 1)).toEqual({ page: 1, page_size: 20, service_id: '0' });
  });

  it('writes and reads the same filters and page through the address', () => {
    const chosen = filters({ serviceId: '12', serviceName: 'web search', phase: 'run', level: 'warn' });
    const search = writeLogSearch(chosen, 4);
    expect(search.toString()).toBe('service_id=12&service_name=web+search&phase=run&level=warn&page=4');
    expect(readLogSearch(search)).toEqual({ filters: chosen, page: 4 });
    expect(writeLogSearch(noFilters, 1).toString()).toBe('');
  });

  it('reads anything the server would refuse from the address as not set', () => {
    const read = readLogSearch(new URLSearchParams('service_id=abc&phase=boot&level=debug&page=0'));
    expect(read).toEqual({ filters: noFilters, page: 1 });
    expect(readLogSearch(new URLSearchParams('page=2.5')).page).toBe(1);
    expect(readLogSearch(new URLSearchParams('page=-2')).page).toBe(1);
    expect(readLogSearch(new URLSearchParams('page=99999999')).page).toBe(1_000_000);
    expect(readLogSearch(new URLSearchParams(`service_name=${'x'.repeat(80)}`)).filters.serviceName).toHaveLength(64);
  });
});
