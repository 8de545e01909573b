import { maskSecrets } from '../compare/secrets.ts';
import type { AnswerSnapshot, DryRunCall } from '../compare/types.ts';
import type { GatewayContext } from '../routes/context.ts';
import type { Mapping } from '../routes/mapping.ts';
import type { ResolvedRoute } from '../routes/resolved-route.ts';
import type { CapturedBody } from './capture.ts';
import { bufferedBody, shadowRequestOf } from './caller-request.ts';
import type { ModeContext } from './mode-context.ts';
import { headersOf, type LegacyAnswer } from './passthrough.ts';
import { compareSnapshots, isWrite, recordOf, REFUSED_CALLER, yieldToCallers } from './records.ts';
import { answerCaller, exchange, legacyAgain, servePassthrough } from './serve-passthrough.ts';
import { readSnapshot, reasonOf, snapshotOf } from './shadow.ts';

/**
 * compare: the legacy API answers the caller; the translation runs afterwards, off the path. A
 * write is never executed twice: the legacy API executes it and the translation gets a dry run
 * (a shadow request in a recorded run, src/upstream/recorded-run.ts, its mutations recorded, not sent).
 */

/** A legacy answer's status and headers, as the shadow work reads them. */
type AnswerHead = Pick<Response, 'status' | 'headers'>;

/** What a compared request's shadow work needs of it. */
interface Compared {
  c: GatewayContext;
  route: ResolvedRoute;
  label: string;
  mapping: Mapping;
  /** When the legacy call started. */
  started: number;
  /** The request body, buffered: the translation or the dry run replays the same bytes. */
  body: Uint8Array | null;
}

export async function serveCompare(modes: ModeContext, c: GatewayContext, route: ResolvedRoute, mapping: Mapping, label: string): Promise<Response> {
  // Sampled out or shed: served exactly as passthrough (a write too: it executes once either way).
  if (!modes.sampled(c, label) || modes.shed(c, label)) return servePassthrough(modes, c);
  const write = isWrite(mapping, c.req.method);
  const release = modes.reserveCapture(c);
  // Buffered (bounded by the body limit): the dry run or the translation replays the same bytes.
  const body = await bufferedBody(c).catch((error: unknown) => {
    release();
    throw error;
  });
  const started = performance.now();
  let answer: LegacyAnswer;
  try {
    answer = await exchange(modes, c, body);
  } catch (error) {
    release();
    // No legacy answer: the caller gets the v2 error; the comparison is an error, nothing more
    // runs. A client that left is not the legacy API's failure: nothing is recorded.
    if ((c.get('signal').reason as Error | undefined)?.name !== 'AbortError') {
      recordOf(modes, c, label, 'compare', { outcome: 'error', status: { legacy: null, translated: null }, ms: { legacy: performance.now() - started, translated: null }, error: `legacy call failed: ${reasonOf(error)}` });
    }
    throw error;
  }
  // A 304 holds nothing to compare (the caller's If-None-Match named the legacy ETag).
  if (answer.status === 304) {
    release();
    return answerCaller(modes, c, answer);
  }
  const compared: Compared = { c, route, label, mapping, started, body };
  const onDone = (done: CapturedBody): void => {
    release();
    modes.schedule(label, c.req.method, () => {
      const head: AnswerHead = { status: answer.status, headers: headersOf(answer) };
      return write ? dryRunWrite(modes, compared, head, done) : compareRead(modes, compared, head, done);
    });
  };
  // A cut answer is never compared (half a body would differ everywhere). Cut by the legacy
  // side (a failure mid-body, or the deadline): recorded as an error, as a legacy call that
  // fails before its headers is; cut by a client that left: nothing is recorded.
  const onCut = (reason: unknown, byCaller: boolean): void => {
    release();
    if (byCaller || REFUSED_CALLER.has(answer.status)) return;
    recordOf(modes, c, label, 'compare', { outcome: 'error', status: { legacy: answer.status, translated: null }, ms: { legacy: performance.now() - started, translated: null }, error: `legacy answer cut mid-body: ${reasonOf(reason)}` });
  };
  return answerCaller(modes, c, answer, { maxBytes: modes.options.maxBodyBytes, onDone, onCut });
}

/** compare, a read: the translation, then the judgement (with a second legacy answer to cancel noise, when it finds a mismatch). */
async function compareRead(modes: ModeContext, compared: Compared, answer: AnswerHead, done: CapturedBody): Promise<void> {
  const { c, label, started, body } = compared;
  const maxBytes = modes.options.maxBodyBytes;
  const legacyMs = done.endedAt - started;
  modes.options.sink.observeSide(label, 'legacy', legacyMs / 1000);
  // A refused caller (bad key, forbidden, throttled) gets no shadow calls: they would spend its
  // rate limit twice more and have the gateway verify keys outside the per-address limit.
  if (REFUSED_CALLER.has(answer.status)) return;
  if (done.bytes === null) {
    recordOf(modes, c, label, 'compare', { outcome: 'error', status: { legacy: answer.status, translated: null }, ms: { legacy: legacyMs, translated: null }, error: `too large to compare (over ${maxBytes} bytes)` });
    return;
  }
  let legacy: AnswerSnapshot;
  try {
    legacy = snapshotOf(answer, done.bytes, legacyMs, maxBytes);
  } catch (error) {
    recordOf(modes, c, label, 'compare', { outcome: 'error', status: { legacy: answer.status, translated: null }, ms: { legacy: legacyMs, translated: null }, error: `legacy body unreadable: ${reasonOf(error)}` });
    return;
  }
  const translatedStarted = performance.now();
  let translated: AnswerSnapshot;
  try {
    translated = await modes.translateShadow(shadowRequestOf(c, body, compared.route)).then((response) => readSnapshot(response, translatedStarted, maxBytes));
  } catch (error) {
    recordOf(modes, c, label, 'compare', { outcome: 'error', status: { legacy: legacy.status, translated: null }, ms: { legacy: legacy.ms, translated: null }, error: `translation failed: ${reasonOf(error)}` });
    return;
  }
  modes.options.sink.observeSide(label, 'translated', translated.ms / 1000);
  await yieldToCallers();
  await compareSnapshots(modes, c, label, 'compare', compared.mapping, { legacy, again: () => legacyAgain(modes, c, label, body), translated });
}

/** compare, a write: the legacy API executed it; the translation runs dry, recording its mutation. */
async function dryRunWrite(modes: ModeContext, compared: Compared, answer: AnswerHead, done: CapturedBody): Promise<void> {
  const { c, label, started, body } = compared;
  const legacyMs = done.endedAt - started;
  modes.options.sink.observeSide(label, 'legacy', legacyMs / 1000);
  // A caller the legacy API refused changed nothing: no dry run, no record (anyone with a
  // key-shaped string could otherwise fill the store with them).
  if (REFUSED_CALLER.has(answer.status)) return;
  const dryStarted = performance.now();
  try {
    const { response, calls } = await modes.dryRun(shadowRequestOf(c, body, compared.route));
    await response.arrayBuffer();
    const mutations: DryRunCall[] = calls.filter((call) => call.kind === 'mutation').map((call) => ({ operation: call.operation, variables: maskSecrets(call.variables) }));
    // The translation refused before planning any write: its status is kept, so an empty dry
    // run does not read as "nothing to check". Where the legacy API made the write, say why (a
    // write that reads its object first finds it changed or gone: every DELETE); where both
    // refused, they agree and nothing more is said. (A planned write answers an error too: its
    // mutation was held back; an unsupported route never plans one, as its verdict says.)
    const planless = mutations.length === 0 && response.status >= 400 && compared.mapping.kind !== 'unsupported';
    recordOf(modes, c, label, 'compare', {
      outcome: 'dry_run',
      status: { legacy: answer.status, translated: planless ? response.status : null },
      ms: { legacy: legacyMs, translated: performance.now() - dryStarted },
      dryRun: { side: 'translated', calls: mutations },
      ...(planless && answer.status < 400 && { error: `the dry run answered ${response.status} and planned no write: it ran after the legacy API had made it, and a write that reads its object first finds it changed or gone` }),
    });
  } catch (error) {
    recordOf(modes, c, label, 'compare', { outcome: 'error', status: { legacy: answer.status, translated: null }, ms: { legacy: legacyMs, translated: null }, error: `dry run failed: ${reasonOf(error)}` });
  }
}
