import { describe, expect, it } from 'vitest';
import { canImport, parseBatchEvent, parseImportJson, progressUrl, summarize } from './batch-import';

describe('batch import events (docs/console.md §3)', () => {
  it('reads a progress item', () => {
    expect(parseBatchEvent('{"name":"a","status":"skipped","message":"exists"}')).toEqual({
      kind: 'item',
      item: { name: 'a', status: 'skipped', message: 'exists', warnings: [] },
    });
  });

  it('reads the warnings of an item imported in part', () => {
    expect(parseBatchEvent('{"name":"team","kind":"group","status":"success","message":"ok","warnings":["bob left out"]}')).toEqual({
      kind: 'item',
      item: { name: 'team', status: 'success', message: 'ok', warnings: ['bob left out'] },
    });
  });

  it('reads the final done event with its summary', () => {
    expect(parseBatchEvent('{"status":"done","summary":{"success":2,"skipped":1,"failed":0}}')).toEqual({
      kind: 'done',
      summary: { success: 2, skipped: 1, failed: 0 },
    });
    expect(parseBatchEvent('{"status":"done"}')).toEqual({ kind: 'done', summary: undefined });
  });

  it('ignores what it does not understand', () => {
    for (const data of ['not json', '42', '{"status":"weird"}', '{"name":"a"}'])
      expect(parseBatchEvent(data), data).toEqual({ kind: 'ignored' });
  });

  it('counts the lines when the server sent no summary', () => {
    const items = [
      { name: 'a', status: 'success', message: '', warnings: [] },
      { name: 'b', status: 'failed', message: 'x', warnings: [] },
      { name: 'c', status: 'success', message: '', warnings: [] },
    ] as const;
    expect(summarize(items, undefined)).toEqual({ success: 2, skipped: 0, failed: 1 });
    expect(summarize(items, { success: 9, skipped: 9, failed: 9 })).toEqual({ success: 9, skipped: 9, failed: 9 });
  });
});

describe('batch import input (docs/console.md §2.9, §5)', () => {
  it('can import only with text and while nothing runs', () => {
    expect(canImport('', false)).toBe(false);
    expect(canImport('  \n', false)).toBe(false);
    expect(canImport('{}', true)).toBe(false);
    expect(canImport('{}', false)).toBe(true);
  });

  it('tells valid JSON from invalid', () => {
    expect(parseImportJson('{"mcpServers":{}}')).toEqual({ mcpServers: {} });
    expect(parseImportJson('{mcpServers:')).toBeUndefined();
  });

  it('passes the access token in the query of the event stream', () => {
    expect(progressUrl('t 1', 'a.b.c')).toBe('/api/mcp_market/batch-import/progress/t%201?token=a.b.c');
  });
});
