import { maskTargetSecrets } from '../compare/secrets.ts';
import { DiffThreadClosed } from '../compare/thread-comparer.ts';
import type { AnswerSnapshot, ComparisonRecord } from '../compare/types.ts';
import type { GatewayContext } from '../routes/context.ts';
import { methodsOf, type Mapping } from '../routes/mapping.ts';
import { apiKeyOf, READ_METHODS, targetOf } from './caller-request.ts';
import type { ModeContext } from './mode-context.ts';
import type { ComparerJudgement } from './ports.ts';
import { reasonOf, sealRecord } from './shadow.ts';

/** What shadow work writes down: one sealed comparison record per compared request. */

export type ComparedMode = 'compare' | 'candidate';
type RecordFields = Pick<ComparisonRecord, 'outcome' | 'status' | 'ms'> & Partial<ComparisonRecord>;

/** Answers that refuse the caller itself (bad key, forbidden, throttled): their writes changed nothing. */
export const REFUSED_CALLER: ReadonlySet<number> = new Set([401, 403, 429]);

/**
 * Could the request change anything? Every method but GET and HEAD, unless its mapping declares
 * it a read (a metric-data form POST). Decided by method, not by mapping kind: a route the
 * translation refuses (an unsupported DELETE) still deletes on the legacy side, so it must never
 * get a second legacy call.
 */
export function isWrite(mapping: Mapping, method: string): boolean {
  if (READ_METHODS.has(method)) return false;
  // A POST served by a mapping without a POST of its own is its read (src/routing/routing-step.ts).
  if (method === 'POST' && !methodsOf(mapping).includes('POST')) return false;
  return !(method === 'POST' && mapping.kind !== 'passthrough' && mapping.readOnlyPost === true);
}

/**
 * A turn of the event loop for the callers' I/O that arrived while shadow work was busy (its
 * awaits so far were microtasks, which run before any I/O): the judgement, one synchronous
 * stretch with an in-process comparer (the gateway's runs on a thread of its own), then runs
 * behind them.
 */
export function yieldToCallers(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

export function recordOf(modes: ModeContext, c: GatewayContext, label: string, mode: ComparedMode, fields: RecordFields): void {
  modes.options.sink.record(
    sealRecord(
      {
        at: modes.now(),
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

/**
 * Both sides' answers judged by the comparer and recorded; a comparer that throws or rejects is an
 * `error` record. `again` makes a second legacy call, only when the first judgement found a
 * mismatch: noise (what moves between two legacy reads) can only turn a mismatch into noise, so
 * an answer without one is judged the same without that call, and the legacy API is spared it.
 * A second call that fails, or a second judgement that fails, leaves the first judgement standing.
 */
export async function compareSnapshots(
  modes: ModeContext,
  c: GatewayContext,
  label: string,
  mode: ComparedMode,
  mapping: Mapping,
  sides: { legacy: AnswerSnapshot; again?: (() => Promise<AnswerSnapshot>) | undefined; translated: AnswerSnapshot },
): Promise<void> {
  const { legacy, translated } = sides;
  const status = { legacy: legacy.status, translated: translated.status };
  const ms = { legacy: legacy.ms, translated: translated.ms };
  const gapPatterns = gapsOf(mapping);
  const judge = (again: AnswerSnapshot | undefined): ComparerJudgement | Promise<ComparerJudgement> =>
    modes.options.comparer({ legacy, ...(again ? { legacyAgain: again } : {}), translated, gapPatterns });
  let judged: ComparerJudgement;
  try {
    judged = await judge(undefined);
  } catch (error) {
    // Cut by the gateway's close: nothing was judged, and nothing went wrong with the answers.
    if (error instanceof DiffThreadClosed) return;
    recordOf(modes, c, label, mode, { outcome: 'error', status, ms, error: `comparer failed: ${reasonOf(error)}` });
    return;
  }
  if (judged.outcome === 'mismatch' && sides.again !== undefined) {
    const again = await sides.again().catch(() => undefined);
    if (again !== undefined) {
      await yieldToCallers();
      try {
        judged = await judge(again);
      } catch (error) {
        if (error instanceof DiffThreadClosed) return;
        // The mismatch found without the second answer stands: its noise could not be weighed.
      }
    }
  }
  recordOf(modes, c, label, mode, {
    outcome: judged.outcome,
    status,
    ms,
    differences: judged.differences,
    ...(judged.tally ? { tally: judged.tally } : {}),
  });
}
