import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A dependency-free OTLP/HTTP trace collector on loopback: takes `POST /v1/traces` in the JSON
 * encoding (what @opentelemetry/exporter-trace-otlp-http sends) and keeps every span, flattened.
 * Usable from any test or e2e run that sets OTEL_EXPORTER_OTLP_ENDPOINT to `url`.
 */

export type AttributeValue = string | number | boolean | null;

export interface CollectedSpan {
  traceId: string;
  spanId: string;
  /** '' for a root span. */
  parentSpanId: string;
  name: string;
  /** OTLP SpanKind: 1 internal, 2 server, 3 client. */
  kind: number;
  attributes: Record<string, AttributeValue>;
  /** OTLP status code: 0 unset, 1 ok, 2 error. */
  status: { code: number; message: string };
  /** Attributes of the resource that sent the span (service.name …). */
  resource: Record<string, AttributeValue>;
}

export interface FakeOtlp {
  /** The base endpoint, for OTEL_EXPORTER_OTLP_ENDPOINT. */
  url: string;
  /** Every request received, whatever its path: `METHOD path content-type`. */
  requests: string[];
  spans: CollectedSpan[];
  close(): Promise<void>;
}

interface OtlpKeyValue {
  key: string;
  value?: Record<string, unknown>;
}

function decodeValue(v: Record<string, unknown> | undefined): AttributeValue {
  if (!v) return null;
  if ('stringValue' in v) return String(v.stringValue);
  if ('boolValue' in v) return Boolean(v.boolValue);
  // int64 values may arrive as strings in OTLP/JSON.
  if ('intValue' in v) return Number(v.intValue);
  if ('doubleValue' in v) return Number(v.doubleValue);
  return JSON.stringify(v);
}

const attributesOf = (list: OtlpKeyValue[] | undefined): Record<string, AttributeValue> =>
  Object.fromEntries((list ?? []).map((kv) => [kv.key, decodeValue(kv.value)]));

interface ExportRequest {
  resourceSpans?: {
    resource?: { attributes?: OtlpKeyValue[] };
    scopeSpans?: {
      spans?: {
        traceId: string;
        spanId: string;
        parentSpanId?: string;
        name: string;
        kind?: number;
        attributes?: OtlpKeyValue[];
        status?: { code?: number; message?: string };
      }[];
    }[];
  }[];
}

export async function startFakeOtlp(): Promise<FakeOtlp> {
  const requests: string[] = [];
  const spans: CollectedSpan[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const type = req.headers['content-type'] ?? '';
      requests.push(`${req.method} ${req.url} ${type}`);
      if (req.method !== 'POST' || req.url !== '/v1/traces' || !type.startsWith('application/json')) {
        res.writeHead(req.url === '/v1/traces' ? 415 : 404).end();
        return;
      }
      let body: ExportRequest;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as ExportRequest;
      } catch {
        res.writeHead(400).end();
        return;
      }
      for (const rs of body.resourceSpans ?? []) {
        const resource = attributesOf(rs.resource?.attributes);
        for (const ss of rs.scopeSpans ?? []) {
          for (const s of ss.spans ?? []) {
            spans.push({
              traceId: s.traceId,
              spanId: s.spanId,
              parentSpanId: s.parentSpanId ?? '',
              name: s.name,
              kind: s.kind ?? 0,
              attributes: attributesOf(s.attributes),
              status: { code: s.status?.code ?? 0, message: s.status?.message ?? '' },
              resource,
            });
          }
        }
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    spans,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
