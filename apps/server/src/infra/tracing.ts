import {
  INVALID_SPAN_CONTEXT,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  type SpanOptions,
  SpanStatusCode,
  type Tracer,
  trace,
} from '@opentelemetry/api';
import type { BasicTracerProvider, SpanExporter } from '@opentelemetry/sdk-trace-base';
import {
  ATTR_HTTP_REQUEST_METHOD,
  ATTR_HTTP_RESPONSE_STATUS_CODE,
  ATTR_HTTP_ROUTE,
  ATTR_SERVICE_NAME,
  ATTR_SERVICE_VERSION,
} from '@opentelemetry/semantic-conventions';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import type { Config } from '../config.js';

/**
 * OpenTelemetry tracing, off unless OTEL_EXPORTER_OTLP_ENDPOINT is set. A tracer provider of this
 * app's own (nothing registered globally, no auto-instrumentation: the server is bundled, and
 * several apps share a test process) batches spans to an OTLP/HTTP collector as JSON. Spans are
 * made explicitly: one per proxied MCP request with its upstream call as a child
 * (gateway/downstream/call-telemetry.ts), one per /api request (traceHttp below).
 */

/** Export requests give up after this long; a collector that is away cannot hold a shutdown. */
const EXPORT_TIMEOUT_MS = 5_000;
const SHUTDOWN_WAIT_MS = 6_000;
const WARN_EVERY_MS = 60_000;

/** Where an OTLP/HTTP collector takes traces: the base endpoint plus `/v1/traces`, as the OTLP spec says. */
export const tracesUrl = (endpoint: string): string => `${endpoint.replace(/\/+$/, '')}/v1/traces`;

type ExportCallback = Parameters<SpanExporter['export']>[1];

/** The OTLP exporter, telling the log (at most once a minute) when the collector cannot be reached. */
class ReportingExporter implements SpanExporter {
  private lastWarning = 0;

  constructor(
    private readonly inner: SpanExporter,
    private readonly logger: Logger | undefined,
    private readonly url: string,
  ) {}

  export(spans: Parameters<SpanExporter['export']>[0], done: ExportCallback): void {
    this.inner.export(spans, (result) => {
      // ExportResultCode.SUCCESS is 0.
      if (result.code !== 0 && Date.now() - this.lastWarning > WARN_EVERY_MS) {
        this.lastWarning = Date.now();
        this.logger?.warn({ err: result.error, url: this.url, spans: spans.length }, 'exporting traces failed');
      }
      done(result);
    });
  }

  shutdown(): Promise<void> {
    return this.inner.shutdown();
  }

  forceFlush(): Promise<void> {
    return this.inner.forceFlush?.() ?? Promise.resolve();
  }
}

export class Tracing {
  private constructor(
    private readonly provider: BasicTracerProvider | undefined,
    private readonly tracer: Tracer | undefined,
  ) {}

  /**
   * Tracing as configured: disabled without an endpoint (no provider, no exporter, no spans). The SDK and the
   * exporter are loaded only with an endpoint: most processes (and test files) never need them.
   */
  static async create(config: Config['tracing'], version: string, logger?: Logger): Promise<Tracing> {
    if (!config.otlpEndpoint) return new Tracing(undefined, undefined);
    const [{ OTLPTraceExporter }, { resourceFromAttributes }, { BasicTracerProvider, BatchSpanProcessor }] = await Promise.all([
      import('@opentelemetry/exporter-trace-otlp-http'),
      import('@opentelemetry/resources'),
      import('@opentelemetry/sdk-trace-base'),
    ]);
    const url = tracesUrl(config.otlpEndpoint);
    const exporter = new ReportingExporter(new OTLPTraceExporter({ url, timeoutMillis: EXPORT_TIMEOUT_MS }), logger, url);
    const provider = new BasicTracerProvider({
      resource: resourceFromAttributes({ [ATTR_SERVICE_NAME]: config.serviceName, [ATTR_SERVICE_VERSION]: version }),
      spanProcessors: [new BatchSpanProcessor(exporter)],
    });
    return new Tracing(provider, provider.getTracer('toolport', version));
  }

  get enabled(): boolean {
    return this.tracer !== undefined;
  }

  /** A span, child of `parent` when given; callers check `enabled` first (disabled: a non-recording span). */
  start(name: string, options: SpanOptions, parent?: Span): Span {
    if (!this.tracer) return trace.wrapSpanContext(INVALID_SPAN_CONTEXT);
    return this.tracer.startSpan(name, options, parent ? trace.setSpan(ROOT_CONTEXT, parent) : ROOT_CONTEXT);
  }

  /** Sends every finished span now. */
  async flush(): Promise<void> {
    await this.provider?.forceFlush();
  }

  /** Flushes and stops; bounded, so an unreachable collector delays a shutdown by seconds at most. */
  async shutdown(): Promise<void> {
    if (!this.provider) return;
    let timer: NodeJS.Timeout | undefined;
    const waited = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, SHUTDOWN_WAIT_MS);
      timer.unref();
    });
    await Promise.race([this.provider.shutdown().catch(() => undefined), waited]);
    clearTimeout(timer);
  }
}

/**
 * A SERVER span per /api request, named by method and route pattern (never the URL, which may
 * carry keys), with the status code. Other paths (proxy, console, /metrics) are not traced here:
 * proxied MCP requests have spans of their own.
 */
export function traceHttp(app: FastifyInstance, tracing: Tracing): void {
  if (!tracing.enabled) return;
  const spans = new WeakMap<FastifyRequest, Span>();
  const finish = (req: FastifyRequest, status: number | undefined) => {
    const span = spans.get(req);
    if (!span) return;
    spans.delete(req);
    if (status === undefined) {
      span.setAttribute('toolport.client_aborted', true);
    } else {
      span.setAttribute(ATTR_HTTP_RESPONSE_STATUS_CODE, status);
      if (status >= 500) {
        span.setAttribute('error.type', String(status));
        span.setStatus({ code: SpanStatusCode.ERROR });
      }
    }
    span.end();
  };
  app.addHook('onRequest', async (req) => {
    const route = req.routeOptions.url;
    if (!route?.startsWith('/api/')) return;
    spans.set(
      req,
      tracing.start(`${req.method} ${route}`, {
        kind: SpanKind.SERVER,
        attributes: { [ATTR_HTTP_REQUEST_METHOD]: req.method, [ATTR_HTTP_ROUTE]: route },
      }),
    );
  });
  app.addHook('onResponse', async (req, reply) => finish(req, reply.statusCode));
  app.addHook('onRequestAbort', async (req) => finish(req, undefined));
}
