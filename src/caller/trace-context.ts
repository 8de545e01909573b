import { callerKeysOf } from './request-id.ts';
import { keyFinder, plainKeyFinder } from './key-disguises.ts';

/** The caller's W3C trace-context headers, as the gateway may continue and relay them. */
export interface CallerTraceContext {
  traceparent: string | null;
  tracestate: string | null;
}

/**
 * The caller's traceparent and tracestate, each dropped when it carries the caller's key or any
 * New Relic key, plain or disguised (key-disguises.ts): they go on to NerdGraph and the legacy
 * API and into exported spans, where a key may never be. A traceparent's ids are hex, and hex
 * is one of the disguises: a trace id of 32 hex digits is 16 characters of a key, a span id 8.
 * A dropped traceparent takes its tracestate with it (the state belongs to that trace): the
 * request starts a trace of its own, or with tracing off carries none.
 */
export function keylessTraceContext(headers: Headers): CallerTraceContext {
  const traceparent = headers.get('traceparent');
  const tracestate = headers.get('tracestate');
  if (traceparent === null && tracestate === null) return { traceparent: null, tracestate: null };
  const keys = callerKeysOf(headers);
  const carriesKey = keyFinder(keys);
  if (traceparent !== null && traceparentCarriesKey(traceparent, keys, carriesKey)) return { traceparent: null, tracestate: null };
  return { traceparent, tracestate: tracestate === null || carriesKey(tracestate) ? null : tracestate };
}

/** Version 00, as nearly every caller sends it: lower-case hex ids only. */
const VERSION_00 = /^00-([0-9a-f]{32})-([0-9a-f]{16})-[0-9a-f]{2}$/;

/**
 * A version-00 traceparent is hex digits and dashes only, so the one disguise it can hold is hex
 * (of the key, or of another encoding of it): each id is checked as it is and hex-decoded from
 * both offsets, the decoded text through every disguise. That is a fraction of the general
 * search, which would also base64-decode hex it cannot hide a key in; any other traceparent
 * (a later version, upper case, junk) gets the general search.
 */
function traceparentCarriesKey(traceparent: string, keys: readonly string[], carriesKey: (value: string) => boolean): boolean {
  const ids = VERSION_00.exec(traceparent);
  if (ids === null) return carriesKey(traceparent);
  const plain = plainKeyFinder(keys);
  return [ids[1] as string, ids[2] as string].some(
    (id) => plain(id) || carriesKey(Buffer.from(id, 'hex').toString('latin1')) || carriesKey(Buffer.from(id.slice(1), 'hex').toString('latin1')),
  );
}
