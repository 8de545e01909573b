import type { Attributes, Span } from '@opentelemetry/api';

/**
 * OpenTelemetry traces (docs/tracing.md), exported over OTLP/HTTP (JSON) when
 * OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is set. The OpenTelemetry
 * packages are imported here, on demand (loadTracing), and nowhere else: with tracing off no
 * OpenTelemetry module is loaded, and the gateway's only cost is one check per request that
 * finds no tracing. The imports above are types only.
 *
 * The SDK reads the other standard variables itself (OTEL_EXPORTER_OTLP_HEADERS and
 * _TIMEOUT, OTEL_TRACES_SAMPLER and _ARG, OTEL_RESOURCE_ATTRIBUTES, OTEL_BSP_*): batching,
 * retries and the OTLP encoding are the SDK's.
 *
 * No context manager is registered: a span's parent is always passed explicitly (the request's
 * span travels in the request's own scope, src/upstream/request-trace.ts), so tracing adds no
 * async-context layer of its own.
 */
export interface TracingConfig {
  /** Where spans are POSTed: OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, else OTEL_EXPORTER_OTLP_ENDPOINT + /v1/traces. */
  tracesUrl: string;
  /** OTEL_SERVICE_NAME, default v2-bridge. */
  serviceName: string;
}

/** The W3C trace-context headers of an outgoing call. */
export interface TraceHeaders {
  traceparent: string;
  tracestate?: string;
}

export interface Tracing {
  /** The span of one inbound request: a child of the caller's trace when its traceparent is valid, else a new trace. */
  requestSpan(name: string, traceparent: string | null, tracestate: string | null, attributes: Attributes): Span;
  /** An outgoing call's span, under `parent`. */
  clientSpan(name: string, parent: Span, attributes: Attributes): Span;
  /** The headers that make `span` the parent of what the callee records. */
  headersOf(span: Span): TraceHeaders;
  /** Marks a span failed (a 5xx answer, a failed call); `type` is error.type, a class name, never a message. */
  fail(span: Span, type: string): void;
  /** Sends the spans ended so far. */
  forceFlush(): Promise<void>;
  /** Sends what is left and stops (graceful shutdown). */
  shutdown(): Promise<void>;
}

/**
 * W3C trace-context level 1 traceparent: version 00 (or a later one, of which only the first
 * four fields are read), a trace id and a parent id that are not all zeros. Used to decide
 * whether a caller's header may be passed on unchanged when tracing is off.
 */
const TRACEPARENT = /^(?!ff)[\da-f]{2}-(?!0{32})[\da-f]{32}-(?!0{16})[\da-f]{16}-[\da-f]{2}(-.*)?$/;
/** tracestate: list members of printable ASCII, at most 512 characters as the spec lets a vendor cut it. */
const TRACESTATE = /^[\x20-\x7e]{1,512}$/;

/**
 * The caller's trace-context headers if its traceparent is valid (and version 00 has nothing
 * after the flags). A later version is passed on as version 00 of its first four fields, as
 * the spec has a version-00 vendor propagate it: whatever followed the flags is never relayed.
 */
export function validTraceHeaders(traceparent: string | null, tracestate: string | null): TraceHeaders | undefined {
  if (traceparent === null || !TRACEPARENT.test(traceparent) || (traceparent.startsWith('00-') && traceparent.length !== 55)) return undefined;
  const relayed = traceparent.startsWith('00-') ? traceparent : `00${traceparent.slice(2, 55)}`;
  return tracestate !== null && TRACESTATE.test(tracestate) ? { traceparent: relayed, tracestate } : { traceparent: relayed };
}

/** How many times the OpenTelemetry packages were loaded in this process (a test holds tracing-off to zero). */
let loads = 0;
export function tracingLoads(): number {
  return loads;
}

export async function loadTracing(config: TracingConfig): Promise<Tracing> {
  loads++;
  const [api, core, sdk, otlp, resources] = await Promise.all([
    import('@opentelemetry/api'),
    import('@opentelemetry/core'),
    import('@opentelemetry/sdk-trace-base'),
    import('@opentelemetry/exporter-trace-otlp-http'),
    import('@opentelemetry/resources'),
  ]);
  // The operator's OTEL_RESOURCE_ATTRIBUTES (service.name included) win over the default name.
  const resource = resources
    .defaultResource()
    .merge(resources.resourceFromAttributes({ 'service.name': config.serviceName }))
    .merge(resources.detectResources({ detectors: [resources.envDetector] }));
  const exporter = new otlp.OTLPTraceExporter({ url: config.tracesUrl });
  // The sampler comes from OTEL_TRACES_SAMPLER (default: parent-based, always on), read by the provider.
  const provider = new sdk.BasicTracerProvider({ resource, spanProcessors: [new sdk.BatchSpanProcessor(exporter)] });
  const tracer = provider.getTracer('v2-bridge');
  const propagator = new core.W3CTraceContextPropagator();
  const root = api.ROOT_CONTEXT;

  return {
    requestSpan(name, traceparent, tracestate, attributes) {
      const carrier: Record<string, string> = {};
      if (traceparent !== null) carrier.traceparent = traceparent;
      if (tracestate !== null) carrier.tracestate = tracestate;
      // An invalid traceparent is ignored by the propagator: the request starts a new trace.
      const parent = traceparent === null ? root : propagator.extract(root, carrier, api.defaultTextMapGetter);
      return tracer.startSpan(name, { kind: api.SpanKind.SERVER, attributes }, parent);
    },
    clientSpan(name, parent, attributes) {
      return tracer.startSpan(name, { kind: api.SpanKind.CLIENT, attributes }, api.trace.setSpan(root, parent));
    },
    headersOf(span) {
      const carrier: Record<string, string> = {};
      propagator.inject(api.trace.setSpan(root, span), carrier, api.defaultTextMapSetter);
      return carrier as unknown as TraceHeaders;
    },
    fail(span, type) {
      span.setAttribute('error.type', type);
      span.setStatus({ code: api.SpanStatusCode.ERROR });
    },
    forceFlush: () => provider.forceFlush(),
    shutdown: () => provider.shutdown(),
  };
}
