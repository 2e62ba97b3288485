import type { IncomingMessage } from 'node:http';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { classify, decodeHeaderValue, modernAnswer, refusedId, upstreamRequest } from './modern-wire.js';

const req = (headers: Record<string, string>) => ({ headers }) as unknown as IncomingMessage;
const envelope = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} };
const call = (params: Record<string, unknown> = {}): JSONRPCMessage => ({
  jsonrpc: '2.0',
  id: 1,
  method: 'tools/call',
  params: { name: 'echo', _meta: envelope, ...params },
});
const modernHeaders = { 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': 'echo' };

describe('the era of a POST, by its shape', () => {
  it('keeps initialize, session ids, batches, responses and envelope-less requests in the legacy era', () => {
    const init: JSONRPCMessage = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25' } };
    expect(classify(req({}), [init], false).era).toBe('legacy');
    expect(classify(req({ 'mcp-session-id': 'abc', ...modernHeaders }), [call()], false).era).toBe('legacy');
    expect(classify(req({}), [{ jsonrpc: '2.0', id: 1, method: 'tools/list' }], false).era).toBe('legacy');
    expect(classify(req({}), [{ jsonrpc: '2.0', id: 1, result: {} }], false).era).toBe('legacy');
    expect(classify(req({}), [{ jsonrpc: '2.0', id: 1, method: 'tools/list' }], true).era).toBe('legacy');
    // A claim naming a 2025 revision is legacy traffic.
    const old = call({ _meta: { ...envelope, 'io.modelcontextprotocol/protocolVersion': '2025-11-25' } });
    expect(classify(req({}), [old], false).era).toBe('legacy');
  });

  it('classifies an enveloped request with agreeing headers as modern, with the envelope read', () => {
    const out = classify(req(modernHeaders), [call({ _meta: { ...envelope, 'io.modelcontextprotocol/logLevel': 'info' } })], false);
    expect(out).toMatchObject({ era: 'modern', envelope: { protocolVersion: '2026-07-28', capabilities: {}, logLevel: 'info' } });
  });

  it('refuses missing or disagreeing headers with -32020, and a bad envelope with -32602', () => {
    const code = (headers: Record<string, string>, message = call()) => {
      const out = classify(req(headers), [message], false);
      return out.era === 'refused' ? [out.failure.status, out.failure.code] : out.era;
    };
    const { 'mcp-name': _n, ...noName } = modernHeaders;
    const { 'mcp-method': _m, ...noMethod } = modernHeaders;
    const { 'mcp-protocol-version': _v, ...noVersion } = modernHeaders;
    expect(code(noName)).toEqual([400, -32020]);
    expect(code(noMethod)).toEqual([400, -32020]);
    expect(code(noVersion)).toEqual([400, -32020]);
    expect(code({ ...modernHeaders, 'mcp-name': 'add' })).toEqual([400, -32020]);
    expect(code({ ...modernHeaders, 'mcp-method': 'tools/list' })).toEqual([400, -32020]);
    expect(code({ ...modernHeaders, 'mcp-protocol-version': '2025-11-25' })).toEqual([400, -32020]);
    const init: JSONRPCMessage = { jsonrpc: '2.0', id: 1, method: 'initialize', params: {} };
    expect(code({ 'mcp-protocol-version': '2026-07-28' }, init)).toEqual([400, -32020]);
    expect(
      code({ 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/list' }, { jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    ).toEqual([400, -32602]);
    const noCaps = call({ _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28' } });
    expect(code(modernHeaders, noCaps)).toEqual([400, -32602]);
    const future = call({ _meta: { ...envelope, 'io.modelcontextprotocol/protocolVersion': '2027-01-01' } });
    expect(code({ ...modernHeaders, 'mcp-protocol-version': '2027-01-01' }, future)).toEqual([400, -32022]);
    expect(code(modernHeaders, { jsonrpc: '2.0', id: 2, method: 'tools/list', params: { _meta: envelope } })).toEqual([400, -32020]);
  });

  it('refuses a version claim that is no revision date as modern (-32022 naming it, or -32020), under the request id', () => {
    const odd = call({ _meta: { ...envelope, 'io.modelcontextprotocol/protocolVersion': 'v999.0.0' } });
    const same = classify(req({ ...modernHeaders, 'mcp-protocol-version': 'v999.0.0' }), [odd], false);
    expect(same).toMatchObject({
      era: 'refused',
      failure: { status: 400, code: -32022, data: { requested: 'v999.0.0', supported: ['2026-07-28'] } },
    });
    const other = classify(req(modernHeaders), [odd], false);
    expect(other).toMatchObject({ era: 'refused', failure: { status: 400, code: -32020 } });
    expect(refusedId([odd], false)).toBe(1);
    expect(refusedId([odd], true)).toBeNull();
    expect(refusedId([{ jsonrpc: '2.0', method: 'notifications/initialized' }], false)).toBeNull();
  });

  it('reads Base64 header values and refuses broken ones', () => {
    expect(decodeHeaderValue(`=?base64?${Buffer.from('日本').toString('base64')}?=`)).toBe('日本');
    expect(decodeHeaderValue('plain')).toBe('plain');
    expect(decodeHeaderValue('=?base64?***?=')).toBeUndefined();
  });
});

describe('modern requests and answers', () => {
  it('sends the upstream the request without the envelope and the retry members, keeping the progress token', () => {
    const up = upstreamRequest(call({ requestState: 's', inputResponses: {}, _meta: { ...envelope, progressToken: 7 } }) as never);
    expect(up.params).toEqual({ name: 'echo', _meta: { progressToken: 7 } });
  });

  it('answers in modern shape under the HTTP request’s id: resultType, and ttlMs and cacheScope on lists', () => {
    const list = JSON.parse(modernAnswer('tools/list', 9, { jsonrpc: '2.0', id: 1, result: { tools: [] } }));
    expect(list).toMatchObject({ id: 9, result: { tools: [], resultType: 'complete', ttlMs: 0, cacheScope: 'private' } });
    const called = JSON.parse(modernAnswer('tools/call', 9, { jsonrpc: '2.0', id: 1, result: { content: [] } }));
    expect(called.result.resultType).toBe('complete');
    expect(called.result.ttlMs).toBeUndefined();
    const failed = JSON.parse(modernAnswer('tools/call', 9, { jsonrpc: '2.0', id: 1, error: { code: -32602, message: 'no' } }));
    expect(failed).toEqual({ jsonrpc: '2.0', id: 9, error: { code: -32602, message: 'no' } });
  });
});
