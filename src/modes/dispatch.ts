import type { MiddlewareHandler } from 'hono';
import { requestDue } from '../budget/request-due.ts';
import { callerFrom, KEY_HEADERS, type IdentityOf } from '../caller/identity.ts';
import { maskSecrets, maskTargetSecrets } from '../compare/secrets.ts';
import type { AnswerSnapshot, ComparisonRecord, DryRunCall } from '../compare/types.ts';
import type { GatewayContext, GatewayEnv } from '../routes/context.ts';
import { methodsOf, type Mapping } from '../routes/mapping.ts';
import type { RecordedCall } from '../upstream/recording-client.ts';
import { parseRequestBody } from '../v2/request-body.ts';
import { createRouteTable } from '../v2/route-table.ts';
import { captureBody, type CapturedBody } from './capture.ts';
import { directOutgoing, sendDirect, type DirectCapture } from './direct.ts';
import { markInternal } from './internal.ts';
import { createModeResolver, type ModeResolver, type RouteInfo } from './mode-resolver.ts';
import { createCallerGauge, createLoopGauge, type LoopUtilisation } from './loop-gauge.ts';
import { headersOf, responseOf, type LegacyAnswer, type LegacyApi, type LegacyBody } from './passthrough.ts';
import type { Comparer, ParitySink } from './ports.ts';
import { createShadowQueue, readSnapshot, reasonOf, sampledIn, sealRecord, snapshotOf } from './shadow.ts';
import type { ModeRule } from './route-modes.ts';

/**
 * The mode dispatch: a middleware in front of the v2 router that decides, per request, how it is
 * served (ROUTE_MODES): `translate` (the router, as before), `passthrough` (forwarded to the
 * legacy REST API), `compare` (the legacy API answers; the translation is compared off the path)
 * or `candidate` (the translation answers; the legacy API is compared off the path).
 *
 * A write is never executed on both sides: in compare mode the legacy API executes it and the
 * translation gets a dry run (the app itself, as a recorded run: src/upstream/recorded-run.ts,
 * whose NerdGraph client records mutations instead of sending them); in candidate mode the
 * translation executes it and the legacy side only records the request it would have made.
 */
export interface ModesOptions {
  rules: readonly ModeRule[];
  legacy: LegacyApi;
  comparer: Comparer;
  sink: ParitySink;
  sampleRate: number;
  concurrency: number;
  queueMax: number;
  maxBodyBytes: number;
  /** COMPARE_MAX_LOOP_UTILISATION: shadow work is dropped while the loop is busier than this and callers overlap; absent or 1: never. */
  maxLoopUtilisation?: number;
  /** The loop's recent utilisation (tests inject one); default a ~200 ms gauge (src/modes/loop-gauge.ts). */
  loopUtilisation?: LoopUtilisation;
}

/** The utilisation window: long enough to smooth one request's burst, short enough to follow load. */
const LOOP_WINDOW_MS = 200;

export interface DispatchDeps {
  modes: ModesOptions;
  mappings: readonly Mapping[];
  publicBaseUrl: string | undefined;
  requestDeadlineMs: number;
  identityOf: IdentityOf;
  now: () => number;
  /** The gateway itself, for the translation side of a comparison (an internal request). */
  translate(request: Request): Promise<Response>;
  /** The gateway as a recorded run, its mutations recorded, not sent: the translation side of a write's dry run. */
  dryRun(request: Request): Promise<{ response: Response; calls: readonly RecordedCall[] }>;
  /** Shutting down: an answer written directly says `Connection: close` itself (the app's own middleware comes too late). */
  draining?: () => boolean;
}

/**
 * A turn of the event loop for the callers' I/O that arrived while shadow work was busy (its
 * awaits so far were microtasks, which run before any I/O): the diff, one synchronous stretch,
 * then runs behind them.
 */
function yieldToCallers(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/** A legacy answer's status and headers, as the shadow work reads them. */
type AnswerHead = Pick<Response, 'status' | 'headers'>;

/** Every route as the resolver sees it: a method of a template, and whether only passthrough serves it. */
export function routeInfos(mappings: readonly Mapping[]): RouteInfo[] {
  return mappings.flatMap((mapping) => methodsOf(mapping).map((method) => ({ template: mapping.route, method, passthroughOnly: mapping.kind === 'passthrough' })));
}

/** Builds the resolver for these mappings; throws ConfigError for rules they make impossible. */
export function modeResolverFor(rules: readonly ModeRule[], mappings: readonly Mapping[]): ModeResolver {
  return createModeResolver(rules, routeInfos(mappings));
}

const READ_METHODS: ReadonlySet<string> = new Set(['GET', 'HEAD']);
/** Answers that refuse the caller itself (bad key, forbidden, throttled): their writes changed nothing. */
const REFUSED_CALLER: ReadonlySet<number> = new Set([401, 403, 429]);

/**
 * Could the request change anything? Every method but GET and HEAD, unless its mapping declares
 * it a read (a metric-data form POST). Decided by method, not by mapping kind: a route the
 * translation refuses (an unsupported DELETE) still deletes on the legacy side, so it must never
 * get a second legacy call.
 */
function isWrite(mapping: Mapping | undefined, method: string): boolean {
  if (READ_METHODS.has(method)) return false;
  return !(method === 'POST' && mapping !== undefined && mapping.kind !== 'passthrough' && mapping.readOnlyPost === true);
}

export function createModeDispatch(deps: DispatchDeps): MiddlewareHandler<GatewayEnv> {
  const { modes } = deps;
  const resolver = modeResolverFor(modes.rules, deps.mappings);
  const table = createRouteTable(deps.mappings.map((mapping) => ({ template: mapping.route, methods: methodsOf(mapping), value: mapping })));
  const maxLoopUtilisation = modes.maxLoopUtilisation ?? 1;
  // The real utilisation counts only while callers overlap; an injected one (tests) decides alone.
  const callers = maxLoopUtilisation < 1 && modes.loopUtilisation === undefined ? createCallerGauge() : undefined;
  const queue = createShadowQueue({
    concurrency: modes.concurrency,
    queueMax: modes.queueMax,
    maxUtilisation: maxLoopUtilisation,
    ...(maxLoopUtilisation < 1 ? { utilisation: modes.loopUtilisation ?? createLoopGauge({ windowMs: LOOP_WINDOW_MS }) } : {}),
    ...(callers ? { callersWaiting: callers.callersOverlap } : {}),
  });

  /**
   * Answers being captured for a comparison, each holding up to COMPARE_MAX_BODY_BYTES until its
   * caller has read it all: bounded like the queue they feed, so slow clients cannot pile up
   * captured bodies beyond what the queue could ever take.
   */
  let capturing = 0;

  /**
   * Shadow work for an answer that has finished: submitted on a later turn of the loop, so the
   * caller's connection is served first; counted dropped when the queue or the loop has no room.
   */
  const schedule = (route: string, method: string, job: () => Promise<void>): void => {
    setImmediate(() => queue.submit(job, () => modes.sink.dropped(route, method)));
  };

  return async (c, next) => {
    // The gateway's own requests (a comparison's translation, a dry run) are always translated.
    // Read from the context: bodyLimit may have replaced c.req.raw (a POST without a length).
    if (c.get('internal') === true) return next();
    const path = c.req.path;
    const matched = table.match(path);
    if (matched === undefined && !path.startsWith('/v2/')) return next();
    const method = c.req.method;
    const routeMethod = method === 'HEAD' ? 'GET' : method;
    const hit = matched?.entries.find((entry) => entry.methods.includes(routeMethod));
    const route = hit
      ? { template: hit.template, passthroughOnly: hit.value.kind === 'passthrough' }
      : matched
        ? { template: matched.entries[0]?.template ?? 'unmatched', passthroughOnly: matched.entries.every((entry) => entry.value.kind === 'passthrough') }
        : undefined;
    // HEAD is GET without the body, for the rules as for the router.
    const mode = resolver.modeOf({ method: routeMethod, path, route });
    const label = route?.template ?? 'unmapped';
    modes.sink.noteUsage(label, method, mode);
    if (mode === 'translate') return next();
    if (mode === 'passthrough') {
      c.set('routeLabel', label);
      return passthrough(c);
    }
    // Comparing needs a translation: without one (an unknown route, method or format) compare
    // answers from the legacy API as it promises, and candidate with the router's v2 error.
    // HEAD (no body to compare) and a GET carrying a body (the shadow calls could not replay it)
    // are served the same way, not compared.
    const comparable = hit !== undefined && (matched?.format === 'json' || matched?.format === 'xml') && method !== 'HEAD' && !hasReadBody(c);
    if (!comparable) {
      if (mode === 'candidate') return next();
      c.set('routeLabel', label);
      return passthrough(c);
    }
    c.set('routeLabel', label);
    return mode === 'compare' ? compare(c, next, label, hit.value) : candidate(c, next, label, hit.value);
  };

  function publicOriginOf(c: GatewayContext): string {
    return deps.publicBaseUrl ?? new URL(c.req.url).origin;
  }

  /** Path and raw query as the client sent them (Node's request target when served over HTTP). */
  function targetOf(c: GatewayContext): string {
    const raw = c.env?.incoming?.url;
    if (raw !== undefined && raw.startsWith('/')) return raw;
    const url = new URL(c.req.url);
    return `${url.pathname}${url.search}`;
  }

  /** A GET with a body (v2 read metric-data parameters from one); its body lives on the raw Node request (see form-body.ts). */
  function hasReadBody(c: GatewayContext): boolean {
    if (c.req.method !== 'GET') return false;
    const incoming = c.env?.incoming;
    return incoming !== undefined && (Number(incoming.headers['content-length'] ?? 0) > 0 || incoming.headers['transfer-encoding'] !== undefined);
  }

  /** The request body to forward as a stream; never one on a HEAD (a pooled connection could read it as the next request). */
  function streamedBody(c: GatewayContext): LegacyBody {
    if (c.req.method === 'HEAD') return null;
    if (c.req.method === 'GET') return hasReadBody(c) ? (c.env?.incoming ?? null) : null;
    return c.req.raw.body;
  }

  async function bufferedBody(c: GatewayContext): Promise<Uint8Array | null> {
    if (READ_METHODS.has(c.req.method)) return null;
    // Hono keeps the bytes read here, so a translation running after this reads them again.
    return new Uint8Array(await c.req.arrayBuffer());
  }

  /** The caller's request, sent to the legacy API: its answer, body not yet read. */
  function exchange(c: GatewayContext, body: LegacyBody): Promise<LegacyAnswer> {
    return modes.legacy.exchange({
      method: c.req.method,
      target: targetOf(c),
      headers: c.req.raw.headers,
      requestId: c.get('requestId'),
      body,
      // The request's deadline covers the legacy answer's body too (request-signal.ts stops
      // watching once the handler has returned, which is before a streamed body has ended).
      dueAt: requestDue() ?? performance.now() + deps.requestDeadlineMs,
      signal: c.get('signal'),
      publicOrigin: publicOriginOf(c),
    });
  }

  /**
   * The legacy answer to the caller: written straight to Node's response when served over HTTP
   * (src/modes/direct.ts), else as a Fetch Response (app.request()). `capture` tees the body
   * for a comparison and hears when the caller's answer is done.
   */
  function answerCaller(c: GatewayContext, answer: LegacyAnswer, capture?: DirectCapture): Response {
    const outgoing = directOutgoing(c.env?.outgoing, c.req.method);
    if (outgoing !== undefined) {
      const extra: Record<string, string> = { 'x-request-id': c.get('requestId') };
      if (deps.draining?.()) extra.connection = 'close';
      return sendDirect(outgoing, answer, extra, capture);
    }
    const response = responseOf(answer);
    response.headers.set('x-request-id', c.get('requestId'));
    if (capture === undefined) return response;
    const captured = captureBody(response.body, capture.maxBytes, capture.onDone, capture.onCut);
    return new Response(captured, { status: response.status, headers: response.headers });
  }

  async function passthrough(c: GatewayContext): Promise<Response> {
    return answerCaller(c, await exchange(c, streamedBody(c)));
  }

  /** The caller's identity for sampling, or undefined (no usable key: nothing to compare as that caller). */
  function sampled(c: GatewayContext, label: string): boolean {
    // Everyone or no one: no identity to compute.
    if (modes.sampleRate >= 1 || modes.sampleRate <= 0) return modes.sampleRate >= 1;
    try {
      const caller = callerFrom(c.req.raw.headers, deps.identityOf);
      return sampledIn(caller.identity, label, modes.sampleRate);
    } catch {
      return false;
    }
  }

  function apiKeyOf(c: GatewayContext): string | undefined {
    for (const name of KEY_HEADERS) {
      const value = c.req.header(name)?.trim();
      if (value) return value;
    }
    return undefined;
  }

  /** Headers of a shadow request: what the answer depends on, the key in the header it came in. */
  function shadowHeaders(c: GatewayContext): Headers {
    const headers = new Headers();
    for (const name of ['accept', 'content-type', 'user-agent', 'x-account-id']) {
      const value = c.req.header(name);
      if (value !== undefined) headers.set(name, value);
    }
    // The gateway's id for the request (the caller's only when it was safe), never the raw header.
    headers.set('x-request-id', c.get('requestId'));
    const keyHeader = KEY_HEADERS.find((name) => (c.req.header(name) ?? '').trim() !== '');
    if (keyHeader !== undefined) headers.set(keyHeader, c.req.header(keyHeader) as string);
    return headers;
  }

  function internalRequest(c: GatewayContext, body: Uint8Array | null): Request {
    const method = c.req.method === 'HEAD' ? 'GET' : c.req.method;
    return markInternal(new Request(c.req.url, { method, headers: shadowHeaders(c), ...(body === null ? {} : { body }) }));
  }

  /** One more legacy call for a comparison (a read), under its own deadline. */
  async function legacyAgain(c: GatewayContext, label: string, body: Uint8Array | null): Promise<AnswerSnapshot> {
    const started = performance.now();
    const answer = await modes.legacy.forward({
      method: c.req.method === 'HEAD' ? 'GET' : c.req.method,
      target: targetOf(c),
      headers: shadowHeaders(c),
      requestId: c.get('requestId'),
      body,
      // One deadline for the whole call, body included: a legacy API that stalls mid-body must not hold a slot.
      dueAt: started + deps.requestDeadlineMs,
      publicOrigin: publicOriginOf(c),
    });
    const snapshot = await readSnapshot(answer, started, modes.maxBodyBytes);
    modes.sink.observeSide(label, 'legacy', snapshot.ms / 1000);
    return snapshot;
  }

  function recordOf(c: GatewayContext, label: string, mode: 'compare' | 'candidate', fields: Pick<ComparisonRecord, 'outcome' | 'status' | 'ms'> & Partial<ComparisonRecord>): void {
    modes.sink.record(
      sealRecord(
        {
          at: deps.now(),
          route: label,
          method: c.req.method,
          mode,
          request: maskTargetSecrets(targetOf(c)),
          differences: [],
          ...fields,
        },
        apiKeyOf(c),
      ),
    );
  }

  function gapsOf(mapping: Mapping): string[] {
    return mapping.knownGaps.flatMap((gap) => (gap.path === undefined ? [] : [gap.path]));
  }

  function compareSnapshots(c: GatewayContext, label: string, mode: 'compare' | 'candidate', mapping: Mapping, legacy: AnswerSnapshot, again: AnswerSnapshot | undefined, translated: AnswerSnapshot): void {
    let judged: ReturnType<Comparer>;
    try {
      judged = modes.comparer({ legacy, ...(again ? { legacyAgain: again } : {}), translated, gapPatterns: gapsOf(mapping) });
    } catch (error) {
      recordOf(c, label, mode, { outcome: 'error', status: { legacy: legacy.status, translated: translated.status }, ms: { legacy: legacy.ms, translated: translated.ms }, error: `comparer failed: ${reasonOf(error)}` });
      return;
    }
    recordOf(c, label, mode, {
      outcome: judged.outcome,
      status: { legacy: legacy.status, translated: translated.status },
      ms: { legacy: legacy.ms, translated: translated.ms },
      differences: judged.differences,
      ...(judged.tally ? { tally: judged.tally } : {}),
    });
  }

  /** No room for shadow work now (queue full, loop busy): counted dropped; the request is served without it. */

  /** Reserves a capture; the release is idempotent and also runs when the caller's connection closes. */
  function reserveCapture(c: GatewayContext): () => void {
    capturing++;
    let held = true;
    const release = (): void => {
      if (!held) return;
      held = false;
      capturing--;
    };
    c.env?.outgoing?.once('close', release);
    return release;
  }

  function shed(c: GatewayContext, label: string): boolean {
    callers?.observe(c.env?.incoming);
    if (queue.hasRoom() && capturing < modes.concurrency + modes.queueMax) return false;
    modes.sink.dropped(label, c.req.method);
    return true;
  }

  /** compare: the legacy API answers the caller; the translation runs afterwards, off the path. */
  async function compare(c: GatewayContext, next: () => Promise<void>, label: string, mapping: Mapping): Promise<Response> {
    // Sampled out or shed: served exactly as passthrough (a write too: it executes once either way).
    if (!sampled(c, label) || shed(c, label)) return passthrough(c);
    const write = isWrite(mapping, c.req.method);
    const release = reserveCapture(c);
    // Buffered (bounded by the body limit): the dry run or the translation replays the same bytes.
    const body = await bufferedBody(c).catch((error: unknown) => {
      release();
      throw error;
    });
    const started = performance.now();
    let answer: LegacyAnswer;
    try {
      answer = await exchange(c, body);
    } catch (error) {
      release();
      // No legacy answer: the caller gets the v2 error; the comparison is an error, nothing more
      // runs. A client that left is not the legacy API's failure: nothing is recorded.
      if ((c.get('signal').reason as Error | undefined)?.name !== 'AbortError') {
        recordOf(c, label, 'compare', { outcome: 'error', status: { legacy: null, translated: null }, ms: { legacy: performance.now() - started, translated: null }, error: `legacy call failed: ${reasonOf(error)}` });
      }
      throw error;
    }
    // A 304 holds nothing to compare (the caller's If-None-Match named the legacy ETag).
    if (answer.status === 304) {
      release();
      return answerCaller(c, answer);
    }
    const onDone = (done: CapturedBody): void => {
      release();
      schedule(label, c.req.method, () => {
        const head: AnswerHead = { status: answer.status, headers: headersOf(answer) };
        return write ? dryRunWrite(c, label, head, done, started, body) : compareRead(c, label, mapping, head, done, started, body);
      });
    };
    // A cut answer is never compared (half a body would differ everywhere). Cut by the legacy
    // side (a failure mid-body, or the deadline): recorded as an error, as a legacy call that
    // fails before its headers is; cut by a client that left: nothing is recorded.
    const onCut = (reason: unknown, byCaller: boolean): void => {
      release();
      if (byCaller || REFUSED_CALLER.has(answer.status)) return;
      recordOf(c, label, 'compare', { outcome: 'error', status: { legacy: answer.status, translated: null }, ms: { legacy: performance.now() - started, translated: null }, error: `legacy answer cut mid-body: ${reasonOf(reason)}` });
    };
    return answerCaller(c, answer, { maxBytes: modes.maxBodyBytes, onDone, onCut });
  }

  async function compareRead(c: GatewayContext, label: string, mapping: Mapping, answer: AnswerHead, done: CapturedBody, started: number, body: Uint8Array | null): Promise<void> {
    const legacyMs = done.endedAt - started;
    modes.sink.observeSide(label, 'legacy', legacyMs / 1000);
    // A refused caller (bad key, forbidden, throttled) gets no shadow calls: they would spend its
    // rate limit twice more and have the gateway verify keys outside the per-address limit.
    if (REFUSED_CALLER.has(answer.status)) return;
    if (done.bytes === null) {
      recordOf(c, label, 'compare', { outcome: 'error', status: { legacy: answer.status, translated: null }, ms: { legacy: legacyMs, translated: null }, error: `too large to compare (over ${modes.maxBodyBytes} bytes)` });
      return;
    }
    let legacy: AnswerSnapshot;
    try {
      legacy = snapshotOf(answer, done.bytes, legacyMs, modes.maxBodyBytes);
    } catch (error) {
      recordOf(c, label, 'compare', { outcome: 'error', status: { legacy: answer.status, translated: null }, ms: { legacy: legacyMs, translated: null }, error: `legacy body unreadable: ${reasonOf(error)}` });
      return;
    }
    const translatedStarted = performance.now();
    const [translated, again] = await Promise.allSettled([
      deps.translate(internalRequest(c, body)).then((response) => readSnapshot(response, translatedStarted, modes.maxBodyBytes)),
      legacyAgain(c, label, body),
    ]);
    if (translated.status === 'rejected') {
      recordOf(c, label, 'compare', { outcome: 'error', status: { legacy: legacy.status, translated: null }, ms: { legacy: legacy.ms, translated: null }, error: `translation failed: ${reasonOf(translated.reason)}` });
      return;
    }
    modes.sink.observeSide(label, 'translated', translated.value.ms / 1000);
    await yieldToCallers();
    // Without a second legacy answer there is no noise to cancel; the comparison still stands.
    compareSnapshots(c, label, 'compare', mapping, legacy, again.status === 'fulfilled' ? again.value : undefined, translated.value);
  }

  /** compare, a write: the legacy API executed it; the translation runs dry, recording its mutation. */
  async function dryRunWrite(c: GatewayContext, label: string, answer: AnswerHead, done: CapturedBody, started: number, body: Uint8Array | null): Promise<void> {
    const legacyMs = done.endedAt - started;
    modes.sink.observeSide(label, 'legacy', legacyMs / 1000);
    // A caller the legacy API refused changed nothing: no dry run, no record (anyone with a
    // key-shaped string could otherwise fill the store with them).
    if (REFUSED_CALLER.has(answer.status)) return;
    const dryStarted = performance.now();
    try {
      const { response, calls } = await deps.dryRun(internalRequest(c, body));
      await response.arrayBuffer();
      const mutations: DryRunCall[] = calls.filter((call) => call.kind === 'mutation').map((call) => ({ operation: call.operation, variables: maskSecrets(call.variables) }));
      recordOf(c, label, 'compare', {
        outcome: 'dry_run',
        status: { legacy: answer.status, translated: null },
        ms: { legacy: legacyMs, translated: performance.now() - dryStarted },
        dryRun: { side: 'translated', calls: mutations },
      });
    } catch (error) {
      recordOf(c, label, 'compare', { outcome: 'error', status: { legacy: answer.status, translated: null }, ms: { legacy: legacyMs, translated: null }, error: `dry run failed: ${reasonOf(error)}` });
    }
  }

  /** candidate: the translation answers the caller; the legacy API is compared afterwards, off the path. */
  async function candidate(c: GatewayContext, next: () => Promise<void>, label: string, mapping: Mapping): Promise<Response | void> {
    if (!sampled(c, label) || shed(c, label)) return next();
    const write = isWrite(mapping, c.req.method);
    const release = reserveCapture(c);
    let answer: Response;
    let body: Uint8Array | null;
    const started = performance.now();
    try {
      // Read before the translation consumes it (Hono keeps the bytes for the router and the write runner).
      body = await bufferedBody(c);
      await next();
      answer = c.res;
    } catch (error) {
      release();
      throw error;
    }
    const bodyText = body === null ? '' : Buffer.from(body).toString('utf8');
    if (answer.status === 304) {
      release();
      return;
    }
    const captured = captureBody(
      answer.body,
      modes.maxBodyBytes,
      (done) => {
        release();
        schedule(label, c.req.method, () => (write ? recordLegacyDryRun(c, label, answer, done, started, bodyText) : candidateRead(c, label, mapping, answer, done, started, body)));
      },
      // Cut: nothing to compare (under app.request() no socket close would release it).
      release,
    );
    c.res = new Response(captured, { status: answer.status, headers: answer.headers });
  }

  async function candidateRead(c: GatewayContext, label: string, mapping: Mapping, answer: Response, done: CapturedBody, started: number, body: Uint8Array | null): Promise<void> {
    const translatedMs = done.endedAt - started;
    modes.sink.observeSide(label, 'translated', translatedMs / 1000);
    // A refused caller gets no legacy shadow calls (they would spend its legacy rate limit).
    if (REFUSED_CALLER.has(answer.status)) return;
    if (done.bytes === null) {
      recordOf(c, label, 'candidate', { outcome: 'error', status: { legacy: null, translated: answer.status }, ms: { legacy: null, translated: translatedMs }, error: `too large to compare (over ${modes.maxBodyBytes} bytes)` });
      return;
    }
    const translated = snapshotOf(answer, done.bytes, translatedMs, modes.maxBodyBytes);
    const [first, second] = await Promise.allSettled([legacyAgain(c, label, body), legacyAgain(c, label, body)]);
    if (first.status === 'rejected') {
      recordOf(c, label, 'candidate', { outcome: 'error', status: { legacy: null, translated: translated.status }, ms: { legacy: null, translated: translated.ms }, error: `legacy call failed: ${reasonOf(first.reason)}` });
      return;
    }
    await yieldToCallers();
    compareSnapshots(c, label, 'candidate', mapping, first.value, second.status === 'fulfilled' ? second.value : undefined, translated);
  }

  /** candidate, a write: the translation executed it; the legacy side records the request it would have made. */
  async function recordLegacyDryRun(c: GatewayContext, label: string, answer: Response, done: CapturedBody, started: number, bodyText: string): Promise<void> {
    const translatedMs = done.endedAt - started;
    modes.sink.observeSide(label, 'translated', translatedMs / 1000);
    // The translation refused the caller: nothing was written, nothing to record.
    if (REFUSED_CALLER.has(answer.status)) return;
    let variables: Record<string, unknown>;
    try {
      // Secrets in the body (a channel's service_key, auth_password, headers, ...) are masked before anything is recorded.
      variables = maskSecrets({ ...parseRequestBody(c.req.header('content-type'), bodyText) });
    } catch {
      // A body that does not parse cannot have its secrets masked: none of its text is kept.
      variables = { unparsedBody: `[not kept: ${Buffer.byteLength(bodyText)} bytes that did not parse]` };
    }
    recordOf(c, label, 'candidate', {
      outcome: 'dry_run',
      status: { legacy: null, translated: answer.status },
      ms: { legacy: null, translated: translatedMs },
      dryRun: { side: 'legacy', calls: [{ operation: `${c.req.method} ${label}`, variables }] },
    });
  }
}

