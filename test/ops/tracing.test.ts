import { spawn, type ChildProcess } from 'node:child_process';
import { createRequire } from 'node:module';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import { fileURLToPath } from 'node:url';
import { pino } from 'pino';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { buildGateway, type BuiltGateway } from '../../src/gateway.ts';
import { loadConfig } from '../../src/ops/config.ts';
import { tracingLoads } from '../../src/ops/tracing.ts';
import { createSandbox, type RunningSandbox } from '../../sandbox/server.ts';
import { DEMO_KEY } from '../support/harness.ts';
import { listenOnLoopback } from '../support/http.ts';

/**
 * OpenTelemetry traces (docs/tracing.md), end to end: an OTLP/HTTP receiver in this process
 * (POST /v1/traces, JSON, as the exporter sends it), the gateway built as `npm start` builds it
 * with OTEL_EXPORTER_OTLP_ENDPOINT pointing at the receiver, and the sandbox behind a relay that
 * records the headers each upstream request arrived with.
 */
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const CALLER_TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const CALLER_SPAN = '00f067aa0ba902b7';
const CALLER_TRACEPARENT = `00-${CALLER_TRACE}-${CALLER_SPAN}-01`;

interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  status?: { code?: number };
  attributes?: Array<{ key: string; value: Record<string, unknown> }>;
}

/** An attribute's value as the OTLP JSON encoding carries it (stringValue, intValue as a string or number, ...). */
function attr(span: OtlpSpan, key: string): unknown {
  const value = span.attributes?.find((a) => a.key === key)?.value;
  if (value === undefined) return undefined;
  if ('intValue' in value) return Number(value.intValue);
  return Object.values(value)[0];
}

/** The OTLP receiver: every span of every POST /v1/traces, and every body as received. */
async function startReceiver() {
  const spans: OtlpSpan[] = [];
  const bodies: string[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
    req.on('end', () => {
      if (req.method === 'POST' && req.url === '/v1/traces') {
        bodies.push(body);
        const parsed = JSON.parse(body) as { resourceSpans?: Array<{ scopeSpans?: Array<{ spans?: OtlpSpan[] }> }> };
        for (const resource of parsed.resourceSpans ?? []) for (const scope of resource.scopeSpans ?? []) spans.push(...(scope.spans ?? []));
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      } else res.writeHead(404).end();
    });
  });
  const { origin, close } = await listenOnLoopback(server);
  return { origin, spans, bodies, close };
}

/** A relay in front of the sandbox that notes each request's path and headers; `failGraphql` /graphql requests are answered 503 instead. */
async function startRecordingRelay(target: string) {
  const seen: Array<{ path: string; headers: IncomingHttpHeaders }> = [];
  const faults = { failGraphql: 0 };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      seen.push({ path: req.url ?? '', headers: req.headers });
      if (req.url === '/graphql' && faults.failGraphql > 0) {
        faults.failGraphql--;
        res.writeHead(503, { 'content-type': 'application/json' }).end('{"errors":[{"message":"relay: unavailable"}]}');
        return;
      }
      const headers = Object.fromEntries(Object.entries(req.headers).filter(([name]) => !['host', 'connection', 'content-length'].includes(name))) as Record<string, string>;
      const body = chunks.length === 0 ? undefined : Buffer.concat(chunks);
      void fetch(`${target}${req.url ?? ''}`, { method: req.method ?? 'GET', headers, ...(body ? { body } : {}) }).then(
        async (answer) => {
          const text = Buffer.from(await answer.arrayBuffer());
          const kept: Record<string, string> = {};
          answer.headers.forEach((value, name) => {
            if (!['content-encoding', 'content-length', 'transfer-encoding', 'connection'].includes(name)) kept[name] = value;
          });
          res.writeHead(answer.status, kept).end(text);
        },
        () => res.writeHead(502).end(),
      );
    });
  });
  const { origin, close } = await listenOnLoopback(server);
  return { origin, seen, faults, close };
}

let sandbox: RunningSandbox;
let relay: Awaited<ReturnType<typeof startRecordingRelay>>;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
let gateway: BuiltGateway;

beforeAll(async () => {
  sandbox = await createSandbox({ apmApps: 20 }).listen(0, '127.0.0.1');
  relay = await startRecordingRelay(sandbox.url);
  receiver = await startReceiver();
  gateway = await buildGateway(
    loadConfig({
      NERDGRAPH_URL: `${relay.origin}/graphql`,
      LEGACY_REST_URL: relay.origin,
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.origin,
      OTEL_SERVICE_NAME: 'v2-bridge-test',
      LOG_LEVEL: 'silent',
      MICRO_CACHE_MS: '0',
    }),
    { logger: pino({ level: 'silent' }) },
  );
});

afterAll(async () => {
  await gateway?.close();
  await receiver?.close();
  await relay?.close();
  await sandbox?.close();
});

/** Sends a request, flushes the exporter and gives back the spans of this request's trace. */
async function traced(path: string, headers: Record<string, string>): Promise<{ status: number; spans: OtlpSpan[] }> {
  const answer = await gateway.app.request(path, { headers: { 'X-Api-Key': DEMO_KEY, ...headers } });
  await answer.arrayBuffer();
  await gateway.tracing?.forceFlush();
  return { status: answer.status, spans: receiver.spans.filter((span) => span.traceId === CALLER_TRACE) };
}

describe('tracing on (OTEL_EXPORTER_OTLP_ENDPOINT)', () => {
  it('exports the request span, continuing the caller trace, with a child span per NerdGraph call; NerdGraph receives the trace', async () => {
    const before = relay.seen.length;
    const { status, spans } = await traced('/v2/applications.json?filter[name]=app', { traceparent: CALLER_TRACEPARENT, tracestate: 'vendor=opaque' });
    expect(status).toBe(200);

    const request = spans.find((span) => span.parentSpanId === CALLER_SPAN);
    expect(request).toBeDefined();
    const root = request as OtlpSpan;
    expect(root.name).toBe('GET /v2/applications.{format}');
    expect(attr(root, 'http.route')).toBe('/v2/applications.{format}');
    expect(attr(root, 'http.request.method')).toBe('GET');
    expect(attr(root, 'http.response.status_code')).toBe(200);
    expect(attr(root, 'v2bridge.mode')).toBe('translate');
    expect(['exact', 'approximate']).toContain(attr(root, 'v2bridge.fidelity'));
    expect(attr(root, 'v2bridge.request_id')).toEqual(expect.any(String));

    const calls = spans.filter((span) => span.parentSpanId === root.spanId);
    expect(calls.length).toBeGreaterThan(0);
    for (const call of calls) {
      expect(call.name).toBe(`NerdGraph ${String(attr(call, 'graphql.operation.name'))}`);
      expect(attr(call, 'v2bridge.attempt')).toBe(1);
      expect(attr(call, 'v2bridge.budget_wait_ms')).toEqual(expect.any(Number));
      expect(attr(call, 'http.response.status_code')).toBe(200);
    }

    // Every /graphql request of this v2 request carried a traceparent naming one of those child spans.
    const graphql = relay.seen.slice(before).filter((r) => r.path === '/graphql');
    expect(graphql.length).toBe(calls.length);
    for (const sent of graphql) {
      const [, trace, parent] = String(sent.headers.traceparent).split('-');
      expect(trace).toBe(CALLER_TRACE);
      expect(calls.map((call) => call.spanId)).toContain(parent);
      expect(sent.headers.tracestate).toBe('vendor=opaque');
    }
  });

  it('a retried read: one span per attempt (attempt 1 failed with its 503, attempt 2 answered), each attempt sent with its own span as parent', async () => {
    // Warm: the key's accounts are cached, so the show's own read is the first /graphql request.
    await traced('/v2/applications.json', {});
    const before = relay.seen.length;
    relay.faults.failGraphql = 1;
    const { status, spans } = await traced('/v2/applications.json?page=1', { traceparent: `00-${CALLER_TRACE}-${'2'.repeat(16)}-01` });
    expect(status).toBe(200);
    const root = spans.find((span) => span.parentSpanId === '2'.repeat(16)) as OtlpSpan;
    const calls = spans.filter((span) => span.parentSpanId === root.spanId);
    // The list's search failed once and was retried; the page details after it went once.
    const search = calls.filter((span) => attr(span, 'graphql.operation.name') === 'ApplicationsSearch');
    search.sort((x, y) => Number(attr(x, 'v2bridge.attempt')) - Number(attr(y, 'v2bridge.attempt')));
    expect(search.map((span) => [attr(span, 'v2bridge.attempt'), attr(span, 'http.response.status_code'), span.status?.code ?? 0, attr(span, 'error.type')])).toEqual([
      [1, 503, 2, 'unavailable'],
      [2, 200, 0, undefined],
    ]);
    // Each /graphql request named its own attempt's span as its parent.
    const parents = relay.seen.slice(before).filter((r) => r.path === '/graphql').map((r) => String(r.headers.traceparent).split('-')[2]);
    expect(parents.sort()).toEqual(calls.map((span) => span.spanId).sort());
  });

  it('a passthrough request: a legacy span under the request span, and the legacy API receives its traceparent', async () => {
    const before = relay.seen.length;
    // alerts_* are passthrough by default.
    const { status, spans } = await traced('/v2/alerts_policies.json?page=1', { traceparent: CALLER_TRACEPARENT });
    expect(status).toBe(200);
    const root = spans.find((span) => span.parentSpanId === CALLER_SPAN && attr(span, 'v2bridge.mode') === 'passthrough') as OtlpSpan;
    expect(root).toBeDefined();
    expect(root.name).toBe('GET /v2/alerts_policies.{format}');
    const legacy = spans.find((span) => span.parentSpanId === root.spanId && span.name === 'legacy GET') as OtlpSpan;
    expect(legacy).toBeDefined();
    expect(attr(legacy, 'http.response.status_code')).toBe(200);
    const sent = relay.seen.slice(before).find((r) => r.path.startsWith('/v2/alerts_policies.json'));
    expect(String(sent?.headers.traceparent)).toBe(`00-${CALLER_TRACE}-${legacy.spanId}-01`);
  });

  it('a 5xx marks the request span failed', async () => {
    // An unreachable NerdGraph: build a second gateway whose NerdGraph URL nothing answers.
    const broken = await buildGateway(
      loadConfig({ NERDGRAPH_URL: 'http://127.0.0.1:1/graphql', OTEL_EXPORTER_OTLP_ENDPOINT: receiver.origin, LOG_LEVEL: 'silent', UPSTREAM_RETRIES: '0' }),
      { logger: pino({ level: 'silent' }) },
    );
    try {
      const answer = await broken.app.request('/v2/applications.json', { headers: { 'X-Api-Key': DEMO_KEY, traceparent: `00-${CALLER_TRACE}-${'1'.repeat(16)}-01` } });
      expect(answer.status).toBeGreaterThanOrEqual(500);
      await broken.tracing?.forceFlush();
      const root = receiver.spans.find((span) => span.parentSpanId === '1'.repeat(16)) as OtlpSpan;
      expect(root.status?.code).toBe(2);
      const call = receiver.spans.find((span) => span.parentSpanId === root.spanId) as OtlpSpan;
      expect(call.status?.code).toBe(2);
      expect(attr(call, 'error.type')).toBe('unavailable');
    } finally {
      await broken.close();
    }
  });

  it('probes and scrapes (/healthz, /readyz, /metrics) make no span', async () => {
    for (const path of ['/healthz', '/readyz', '/metrics']) {
      const answer = await gateway.app.request(path, { headers: { traceparent: `00-${CALLER_TRACE}-${'3'.repeat(16)}-01` } });
      await answer.arrayBuffer();
    }
    await gateway.tracing?.forceFlush();
    expect(receiver.spans.filter((span) => span.parentSpanId === '3'.repeat(16))).toEqual([]);
  });

  it('a traceparent whose ids are the hex of a key is neither continued, relayed nor exported, nor its tracestate', async () => {
    // DEMO_KEY's first 16 characters as the trace id; 8 characters of another New Relic key as the span id.
    const keyTrace = Buffer.from(DEMO_KEY.slice(0, 16)).toString('hex');
    const otherKeySpan = Buffer.from('NRAK-7QZ').toString('hex');
    const honestSpan = '5'.repeat(16);
    const before = relay.seen.length;
    const sentHeaders: Array<Record<string, string>> = [
      { traceparent: `00-${keyTrace}-${honestSpan}-01`, tracestate: 'vendor=opaque' },
      { traceparent: `00-${CALLER_TRACE}-${otherKeySpan}-01` },
      // Upper-case hex, and a later version: the same ids.
      { traceparent: `01-${keyTrace.toUpperCase()}-${honestSpan}-01-extra` },
    ];
    for (const path of ['/v2/applications.json', '/v2/alerts_policies.json']) {
      for (const headers of sentHeaders) {
        const answer = await gateway.app.request(path, { headers: { 'X-Api-Key': DEMO_KEY, ...headers } });
        expect(answer.status).toBe(200);
        await answer.arrayBuffer();
      }
    }
    await gateway.tracing?.forceFlush();
    const exported = receiver.bodies.join('\n').toLowerCase();
    expect(exported).not.toContain(keyTrace);
    expect(exported).not.toContain(otherKeySpan);
    const upstream = relay.seen.slice(before);
    expect(upstream.some((r) => r.path === '/graphql')).toBe(true);
    expect(upstream.some((r) => r.path.startsWith('/v2/alerts_policies.json'))).toBe(true);
    for (const sent of upstream) {
      // Each call carries the gateway's own new trace, never the caller's ids or its state.
      const [, trace, parent] = String(sent.headers.traceparent).split('-');
      expect(trace).not.toBe(keyTrace);
      expect(parent).not.toBe(otherKeySpan);
      expect(sent.headers.tracestate).toBeUndefined();
    }
  });

  it('no span attribute, name or resource holds the API key or a query string', () => {
    expect(receiver.bodies.length).toBeGreaterThan(0);
    for (const body of receiver.bodies) {
      expect(body).not.toContain(DEMO_KEY);
      expect(body).not.toContain('filter');
    }
    for (const span of receiver.spans) {
      expect(span.name).not.toContain('?');
      for (const { value } of span.attributes ?? []) expect(String(Object.values(value)[0])).not.toMatch(/\?|NRAK/);
    }
  });
});

describe('tracing off', () => {
  it('loads no OpenTelemetry module, and passes a valid caller traceparent on unchanged (an invalid one not at all)', async () => {
    const off = await buildGateway(loadConfig({ NERDGRAPH_URL: `${relay.origin}/graphql`, LEGACY_REST_URL: relay.origin, LOG_LEVEL: 'silent' }), {
      logger: pino({ level: 'silent' }),
    });
    try {
      expect(off.tracing).toBeUndefined();
      const before = relay.seen.length;
      const answer = await off.app.request('/v2/alerts_policies.json', { headers: { 'X-Api-Key': DEMO_KEY, traceparent: CALLER_TRACEPARENT } });
      await answer.arrayBuffer();
      const translated = await off.app.request('/v2/applications.json', { headers: { 'X-Api-Key': DEMO_KEY, traceparent: CALLER_TRACEPARENT } });
      await translated.arrayBuffer();
      const invalid = await off.app.request('/v2/alerts_policies.json', { headers: { 'X-Api-Key': DEMO_KEY, traceparent: `00-${'0'.repeat(32)}-${CALLER_SPAN}-01` } });
      await invalid.arrayBuffer();
      // A tracestate carrying the key (base64 here) is not passed on; the traceparent still is.
      const keyed = await off.app.request('/v2/alerts_policies.json', {
        headers: { 'X-Api-Key': DEMO_KEY, traceparent: CALLER_TRACEPARENT, tracestate: `k=${Buffer.from(DEMO_KEY).toString('base64').replace(/=/g, '')}` },
      });
      await keyed.arrayBuffer();
      // A later version is relayed as version 00 of its first four fields: what followed the flags never is.
      const later = await off.app.request('/v2/alerts_policies.json', { headers: { 'X-Api-Key': DEMO_KEY, traceparent: `01${CALLER_TRACEPARENT.slice(2)}-future` } });
      await later.arrayBuffer();
      // A traceparent carrying a key (its trace id the key's hex, or the key after the flags): not passed on at all, nor its tracestate.
      const hexKey = Buffer.from(DEMO_KEY.slice(0, 16)).toString('hex');
      const beforeKeyed = relay.seen.length;
      for (const [path, traceparent] of [
        ['/v2/alerts_policies.json', `00-${hexKey}-${CALLER_SPAN}-01`],
        ['/v2/applications.json?filter[name]=keyed', `00-${hexKey}-${CALLER_SPAN}-01`],
        ['/v2/alerts_policies.json', `01${CALLER_TRACEPARENT.slice(2)}-${DEMO_KEY}`],
      ] as const) {
        const keyed = await off.app.request(path, { headers: { 'X-Api-Key': DEMO_KEY, traceparent, tracestate: 'vendor=opaque' } });
        await keyed.arrayBuffer();
      }
      const seen = relay.seen.slice(before);
      const [legacy, ...rest] = seen.filter((r) => r.path.startsWith('/v2/alerts_policies.json'));
      expect(legacy?.headers.traceparent).toBe(CALLER_TRACEPARENT);
      expect(rest[0]?.headers.traceparent).toBeUndefined();
      expect(rest[1]?.headers.traceparent).toBe(CALLER_TRACEPARENT);
      expect(rest[1]?.headers.tracestate).toBeUndefined();
      expect(rest[2]?.headers.traceparent).toBe(CALLER_TRACEPARENT);
      const keyedCalls = relay.seen.slice(beforeKeyed);
      const graphql = seen.filter((r) => r.path === '/graphql' && !keyedCalls.includes(r));
      expect(graphql.length).toBeGreaterThan(0);
      for (const sent of graphql) expect(sent.headers.traceparent).toBe(CALLER_TRACEPARENT);
      expect(keyedCalls.map((r) => r.path.split('?')[0])).toEqual(expect.arrayContaining(['/v2/alerts_policies.json', '/graphql']));
      for (const sent of keyedCalls) {
        expect(sent.headers.traceparent).toBeUndefined();
        expect(sent.headers.tracestate).toBeUndefined();
      }
    } finally {
      await off.close();
    }
  });

  it('in a process with tracing off, no OpenTelemetry SDK module is ever loaded', async () => {
    // A fresh process: this test file's own gateway has tracing on.
    const script = [
      "import { pino } from 'pino';",
      "import { buildGateway } from './src/gateway.ts';",
      "import { loadConfig } from './src/ops/config.ts';",
      "import { tracingLoads } from './src/ops/tracing.ts';",
      "import { createRequire } from 'node:module';",
      "const gateway = await buildGateway(loadConfig({ LOG_LEVEL: 'silent', SANDBOX_APM_APPS: '5' }), { logger: pino({ level: 'silent' }) });",
      "const answer = await gateway.app.request('/v2/applications.json', { headers: { 'X-Api-Key': 'NRAK-SANDBOX-DEMO', traceparent: '" + CALLER_TRACEPARENT + "' } });",
      'await answer.text();',
      'await gateway.close();',
      // prom-client loads @opentelemetry/api (the no-op facade) for its CPU counter, tracing or not: the SDK, exporter, resources and core are the tracing's.
      "const loaded = Object.keys(createRequire(import.meta.url).cache).filter((path) => path.includes('@opentelemetry') && !path.includes('@opentelemetry/api/'));",
      'process.stdout.write(JSON.stringify({ status: answer.status, loads: tracingLoads(), loaded }));',
    ].join('\n');
    const output = await runScript(script);
    expect(JSON.parse(output)).toEqual({ status: 200, loads: 0, loaded: [] });
    // The same check sees the modules when they are loaded (this process, tracing on).
    expect(tracingLoads()).toBeGreaterThan(0);
    expect(Object.keys(createRequire(import.meta.url).cache).some((path) => path.includes('@opentelemetry/sdk-trace-base/'))).toBe(true);
  });
});

describe('graceful shutdown', () => {
  const children: ChildProcess[] = [];
  afterEach(() => {
    for (const child of children.splice(0)) if (child.exitCode === null) child.kill('SIGKILL');
  });

  it('SIGTERM sends the spans not exported yet before the process exits', async () => {
    const own = await startReceiver();
    try {
      const child = spawn(process.execPath, ['src/index.ts'], {
        cwd: ROOT,
        // A batch delay far beyond the test: only the shutdown can have sent the span.
        env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', PORT: '0', LOG_LEVEL: 'info', SANDBOX_APM_APPS: '5', OTEL_EXPORTER_OTLP_ENDPOINT: own.origin, OTEL_BSP_SCHEDULE_DELAY: '600000' },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      children.push(child);
      let output = '';
      child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
      child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
      const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
      const port = await waitFor(() => /"port":(\d+)[^\n]*v2-bridge listening/.exec(output)?.[1]);
      const answer = await fetch(`http://127.0.0.1:${port}/v2/applications.json`, { headers: { 'X-Api-Key': DEMO_KEY, traceparent: CALLER_TRACEPARENT } });
      expect(answer.status).toBe(200);
      await answer.text();
      expect(own.spans).toEqual([]);
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
      expect(own.spans.some((span) => span.traceId === CALLER_TRACE && span.parentSpanId === CALLER_SPAN)).toBe(true);
    } finally {
      await own.close();
    }
  });
});

async function waitFor<T>(probe: () => T | undefined): Promise<T> {
  for (let i = 0; i < 800; i++) {
    const value = probe();
    if (value !== undefined) return value;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error('timed out waiting for the gateway to listen');
}

function runScript(script: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString('utf8')));
    child.on('exit', (code) => (code === 0 ? resolve(out) : reject(new Error(`exit ${code}: ${err}`))));
  });
}
