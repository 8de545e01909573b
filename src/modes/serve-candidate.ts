import { maskSecrets } from '../compare/secrets.ts';
import type { AnswerSnapshot } from '../compare/types.ts';
import type { GatewayContext } from '../routes/context.ts';
import type { Mapping } from '../routes/mapping.ts';
import { parseRequestBody } from '../v2/request-body.ts';
import { captureBody, type CapturedBody } from './capture.ts';
import { bufferedBody } from './caller-request.ts';
import type { ModeContext } from './mode-context.ts';
import { compareSnapshots, isWrite, recordOf, REFUSED_CALLER, yieldToCallers } from './records.ts';
import { legacyAgain } from './serve-passthrough.ts';
import { reasonOf, snapshotOf } from './shadow.ts';

/**
 * candidate: the translation answers the caller; the legacy API is compared afterwards, off the
 * path. A write is never executed twice: the translation executes it and the legacy side only
 * records the request it would have made.
 */

/** What a candidate request's shadow work needs of it. */
interface Candidate {
  c: GatewayContext;
  label: string;
  mapping: Mapping;
  /** When the translation started. */
  started: number;
  /** The request body, buffered before the translation read it. */
  body: Uint8Array | null;
}

/** `translate` runs the translation in the caller's context (serveTranslation): its answer, errors included, is the caller's. */
export async function serveCandidate(modes: ModeContext, c: GatewayContext, mapping: Mapping, label: string, translate: () => Promise<Response>): Promise<Response> {
  if (!modes.sampled(c, label) || modes.shed(c, label)) return translate();
  const write = isWrite(mapping, c.req.method);
  const release = modes.reserveCapture(c);
  let answer: Response;
  let body: Uint8Array | null;
  const started = performance.now();
  try {
    // Read before the translation consumes it (Hono keeps the bytes for the router and the write runner).
    body = await bufferedBody(c);
    answer = await translate();
  } catch (error) {
    release();
    throw error;
  }
  if (answer.status === 304) {
    release();
    return answer;
  }
  const candidate: Candidate = { c, label, mapping, started, body };
  const captured = captureBody(
    answer.body,
    modes.options.maxBodyBytes,
    (done) => {
      release();
      modes.schedule(label, c.req.method, () => (write ? recordLegacyDryRun(modes, candidate, answer, done) : candidateRead(modes, candidate, answer, done)));
    },
    // Cut: nothing to compare (under app.request() no socket close would release it).
    release,
  );
  return new Response(captured, { status: answer.status, headers: answer.headers });
}

/** candidate, a read: a legacy answer, then the judgement (with a second legacy answer to cancel noise, when it finds a mismatch). */
async function candidateRead(modes: ModeContext, candidate: Candidate, answer: Response, done: CapturedBody): Promise<void> {
  const { c, label, started, body } = candidate;
  const maxBytes = modes.options.maxBodyBytes;
  const translatedMs = done.endedAt - started;
  modes.options.sink.observeSide(label, 'translated', translatedMs / 1000);
  // A refused caller gets no legacy shadow calls (they would spend its legacy rate limit).
  if (REFUSED_CALLER.has(answer.status)) return;
  if (done.bytes === null) {
    recordOf(modes, c, label, 'candidate', { outcome: 'error', status: { legacy: null, translated: answer.status }, ms: { legacy: null, translated: translatedMs }, error: `too large to compare (over ${maxBytes} bytes)` });
    return;
  }
  const translated = snapshotOf(answer, done.bytes, translatedMs, maxBytes);
  let first: AnswerSnapshot;
  try {
    first = await legacyAgain(modes, c, label, body);
  } catch (error) {
    recordOf(modes, c, label, 'candidate', { outcome: 'error', status: { legacy: null, translated: translated.status }, ms: { legacy: null, translated: translated.ms }, error: `legacy call failed: ${reasonOf(error)}` });
    return;
  }
  await yieldToCallers();
  // A legacy API that refused the caller (bad key, forbidden, throttled) is not asked again.
  const again = REFUSED_CALLER.has(first.status) ? undefined : () => legacyAgain(modes, c, label, body);
  await compareSnapshots(modes, c, label, 'candidate', candidate.mapping, { legacy: first, again, translated });
}

/** candidate, a write: the translation executed it; the legacy side records the request it would have made. */
async function recordLegacyDryRun(modes: ModeContext, candidate: Candidate, answer: Response, done: CapturedBody): Promise<void> {
  const { c, label, started, body } = candidate;
  const translatedMs = done.endedAt - started;
  modes.options.sink.observeSide(label, 'translated', translatedMs / 1000);
  // The translation refused the caller: nothing was written, nothing to record.
  if (REFUSED_CALLER.has(answer.status)) return;
  const bodyText = body === null ? '' : Buffer.from(body).toString('utf8');
  let variables: Record<string, unknown>;
  try {
    // Secrets in the body (a channel's service_key, auth_password, headers, ...) are masked before anything is recorded.
    variables = maskSecrets({ ...parseRequestBody(c.req.header('content-type'), bodyText) });
  } catch {
    // A body that does not parse cannot have its secrets masked: none of its text is kept.
    variables = { unparsedBody: `[not kept: ${Buffer.byteLength(bodyText)} bytes that did not parse]` };
  }
  recordOf(modes, c, label, 'candidate', {
    outcome: 'dry_run',
    status: { legacy: null, translated: answer.status },
    ms: { legacy: null, translated: translatedMs },
    dryRun: { side: 'legacy', calls: [{ operation: `${c.req.method} ${label}`, variables }] },
  });
}
