import { subscribe } from 'node:diagnostics_channel';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';

/**
 * How busy the event loop has been lately, 0 (idle) to 1 (never idle): the share of time the
 * loop spent running code rather than waiting for I/O (`performance.eventLoopUtilization()`),
 * averaged over the last `windowMs` or so. Shadow work is dropped while this is high
 * (COMPARE_MAX_LOOP_UTILISATION, src/modes/shadow.ts) and other callers are in flight (below).
 *
 * A time-weighted moving average, updated on each reading (no timer): the stretch since the
 * previous reading counts with weight 1 - e^(-elapsed/windowMs). So a reading after a long
 * quiet spell reflects that spell, and under load the value climbs to the load's level within
 * about one window, whatever the reading rate.
 */
export interface LoopSample {
  /** Milliseconds the loop has spent idle (waiting in the poll phase), since some fixed start. */
  idle: number;
  /** Milliseconds it has spent active, since the same start. */
  active: number;
}

export type LoopUtilisation = () => number;

export function createLoopGauge(options: { windowMs: number; sample?: () => LoopSample }): LoopUtilisation {
  const sample = options.sample ?? ((): LoopSample => performance.eventLoopUtilization());
  let last = sample();
  let value = 0;
  return () => {
    const now = sample();
    const idle = now.idle - last.idle;
    const active = now.active - last.active;
    const elapsed = idle + active;
    if (elapsed <= 0) return value;
    const weight = 1 - Math.exp(-elapsed / options.windowMs);
    value += (active / elapsed - value) * weight;
    last = now;
    return value;
  };
}

/**
 * Is anyone else waiting? A busy loop is load only when other callers share it: one sequential
 * client keeps the loop busy with its own requests (its utilisation reads near 1), yet nobody
 * waits behind it, and shadow work run then delays only that client's next request. So the
 * utilisation counts only while callers overlap: one of the last RECENT_STARTS requests to start
 * on the gateway's server started while another was in flight, or in the same turn of the loop
 * as another. (Counting callers, not timing the loop's lag: that lag is also what the shadow
 * work itself causes, so it would read one client's own comparisons as load.)
 *
 * Why the same turn, and why the last few rather than now: callers that arrive while the loop is
 * busy wait in the socket buffers, unseen. Once it is free they are all read in one turn; an
 * answer that needs no I/O (from the micro-cache, say) is finished before the next request is
 * even read, so none is ever in flight with another, and the first of them starts alone. A sequential client
 * never starts two requests in one turn: it sends the next only after reading the last answer.
 *
 * Counted from Node's own report of each HTTP request (the `http.server.request.start`
 * diagnostics channel, one subscription for the process): a request is in flight from its
 * headers until its response closes (answered or cut). Every server in the process is counted
 * apart (the embedded sandbox and test upstreams have their own), and a gauge follows the server
 * its first caller came to (`observe`): the mode strategies tell it about each compared request.
 * Per request: two counters and one `close` listener; per turn with requests, one setImmediate.
 */
interface Tally {
  inFlight: number;
  /** Requests started in this turn of the loop (reset on the next turn): more than one had waited together. */
  startedThisTurn: number;
  /** Requests started alone since the last one that overlapped another. */
  aloneSinceOverlap: number;
}

/** Lone starts in a row that clear the last overlap: a sequential client after a busy spell is compared again after this many requests. */
const RECENT_STARTS = 8;

const tallyOfServer = new WeakMap<Server, Tally>();
const tallyOfRequest = new WeakMap<IncomingMessage, Tally>();
let counting = false;

function countRequestsInFlight(): void {
  if (counting) return;
  counting = true;
  subscribe('http.server.request.start', (message) => {
    // The channel's documented message (node:diagnostics_channel, built-in HTTP channels; Node marks them experimental).
    const { request, response, server } = message as { request: IncomingMessage; response: ServerResponse; server: Server };
    let tally = tallyOfServer.get(server);
    if (tally === undefined) {
      tally = { inFlight: 0, startedThisTurn: 0, aloneSinceOverlap: Infinity };
      tallyOfServer.set(server, tally);
    }
    const counted = tally;
    counted.inFlight++;
    // setImmediate runs once the loop has read every socket that was ready this turn.
    if (counted.startedThisTurn++ === 0) setImmediate(() => (counted.startedThisTurn = 0));
    counted.aloneSinceOverlap = counted.inFlight > 1 || counted.startedThisTurn > 1 ? 0 : counted.aloneSinceOverlap + 1;
    tallyOfRequest.set(request, counted);
    let open = true;
    const done = (): void => {
      if (!open) return;
      open = false;
      counted.inFlight--;
    };
    // A pipelined response never assigned its socket emits no 'close' when the client hangs up; its request does.
    response.once('close', done);
    // Pipelined (queued behind another answer, no socket yet): if the client hangs up first, only the socket tells.
    if (response.socket === null) {
      const socket = request.socket;
      socket.once('close', done);
      response.once('close', () => socket.removeListener('close', done));
    }
  });
}

export interface CallerGauge {
  /** Follows the server this request came to, if the gauge follows none yet; in-process requests (no Node request) tell nothing. */
  observe(request: IncomingMessage | undefined): void;
  /**
   * Have callers overlapped lately: did one of the last RECENT_STARTS requests on that server
   * start while another was in flight, or in the same turn as another? True until a caller over
   * HTTP was observed: then only the utilisation can tell, as it did alone before.
   */
  callersOverlap(): boolean;
}

export function createCallerGauge(): CallerGauge {
  countRequestsInFlight();
  let tally: Tally | undefined;
  return {
    observe(request) {
      if (tally === undefined && request !== undefined) tally = tallyOfRequest.get(request);
    },
    callersOverlap: () => tally === undefined || tally.aloneSinceOverlap < RECENT_STARTS,
  };
}
