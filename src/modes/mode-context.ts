import { callerFrom, type IdentityOf } from '../caller/identity.ts';
import type { GatewayContext } from '../routes/context.ts';
import type { ShadowRequest } from '../routes/shadow-translation.ts';
import type { Translation } from '../routes/v2-router.ts';
import type { RecordedCall } from '../upstream/recording-client.ts';
import { createCallerGauge, createLoopGauge, type CallerGauge, type LoopUtilisation } from './loop-gauge.ts';
import type { LegacyApi } from './passthrough.ts';
import type { Comparer, ParitySink } from './ports.ts';
import type { ModeRule } from '../ops/route-modes.ts';
import { createShadowQueue, sampledIn, type ShadowQueue } from './shadow.ts';

/**
 * What the mode strategies share (src/modes/serve-*.ts): their options, the shadow queue and
 * the bounds on shadow work. Built once per app by createModeStrategies (src/modes/strategies.ts).
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

export interface ModeDeps {
  options: ModesOptions;
  publicBaseUrl: string | undefined;
  requestDeadlineMs: number;
  identityOf: IdentityOf;
  now: () => number;
  /** The translation (src/routes/v2-router.ts): candidate mode serves it in the caller's context. */
  translation: Translation;
  /** A shadow request's translation (src/routes/shadow-translation.ts): the translated side of a compared read. */
  translateShadow(shadow: ShadowRequest): Promise<Response>;
  /** As translateShadow, in a recorded run: its mutations recorded, not sent (the translated side of a compared write). */
  dryRun(shadow: ShadowRequest): Promise<{ response: Response; calls: readonly RecordedCall[] }>;
  /** Shutting down: an answer written directly says `Connection: close` itself (the app's own middleware comes too late). */
  draining?: () => boolean;
}

export interface ModeContext extends ModeDeps {
  /** Submits shadow work once the caller's answer has finished; counted dropped when there is no room. */
  schedule(route: string, method: string, job: () => Promise<void>): void;
  /** Is this (caller, route) pair sampled in? No usable key: nothing to compare as that caller. */
  sampled(c: GatewayContext, label: string): boolean;
  /** No room for shadow work now (queue full, captures at their bound, loop busy): counted dropped. */
  shed(c: GatewayContext, label: string): boolean;
  /** Reserves a capture; the release is idempotent and also runs when the caller's connection closes. */
  reserveCapture(c: GatewayContext): () => void;
}

/** The utilisation window: long enough to smooth one request's burst, short enough to follow load. */
const LOOP_WINDOW_MS = 200;

export function createModeContext(deps: ModeDeps): ModeContext {
  const modes = deps.options;
  const maxLoopUtilisation = modes.maxLoopUtilisation ?? 1;
  // Shadow work comes only from compare and candidate, which only a rule names: without such a
  // rule (every route passthrough or translated) nothing is ever shed, so no request is counted.
  const compares = modes.rules.some((rule) => rule.mode === 'compare' || rule.mode === 'candidate');
  // The real utilisation counts only while callers overlap; an injected one (tests) decides alone.
  const callers: CallerGauge | undefined = compares && maxLoopUtilisation < 1 && modes.loopUtilisation === undefined ? createCallerGauge() : undefined;
  const queue: ShadowQueue = createShadowQueue({
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

  return {
    ...deps,
    // Submitted on a later turn of the loop, so the caller's connection is served first.
    schedule(route, method, job) {
      setImmediate(() => queue.submit(job, () => modes.sink.dropped(route, method)));
    },
    sampled(c, label) {
      // Everyone or no one: no identity to compute.
      if (modes.sampleRate >= 1 || modes.sampleRate <= 0) return modes.sampleRate >= 1;
      try {
        const caller = callerFrom(c.req.raw.headers, deps.identityOf);
        return sampledIn(caller.identity, label, modes.sampleRate);
      } catch {
        return false;
      }
    },
    shed(c, label) {
      callers?.observe(c.env?.incoming);
      if (queue.hasRoom() && capturing < modes.concurrency + modes.queueMax) return false;
      modes.sink.dropped(label, c.req.method);
      return true;
    },
    reserveCapture(c) {
      capturing++;
      let held = true;
      const release = (): void => {
        if (!held) return;
        held = false;
        capturing--;
      };
      c.env?.outgoing?.once('close', release);
      return release;
    },
  };
}
