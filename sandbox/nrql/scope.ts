/**
 * What one NRQL query runs against and answers (nrql/engine.ts): its scope (data, visible
 * accounts, clock, row budget), its outcome and metadata, the errors NRDB would answer and the
 * bounds the sandbox keeps, the shape of a timeslice series, and the behaviours (behaviours.ts)
 * in force while one query runs: strictAttributeTypes, mobileGuidAttribute, rollupSnapping.
 */
import { DEFAULT_BEHAVIOURS, type SandboxBehaviours } from '../behaviours.ts';
import type { InstanceShare } from '../instance-split.ts';
import type { SandboxData, SandboxKeyTransaction } from '../model.ts';
import type { MetricOwner, SandboxMetric, TimesliceScope } from '../timeslices.ts';
/** A query NRDB would refuse; the message is the one NerdGraph shows. */
export class NrqlError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'NrqlError';
  }
}

export const NRQL_MESSAGES = {
  noApplication: 'No application was matched (did you specify appId, appName or entity.guid?)',
  startAfterEnd: "Your query's start time must be before its end time",
  tooManyBuckets: 'TIMESERIES supports a maximum of 366 buckets',
  stepTooLarge: 'TIMESERIES step size is larger than the current time window',
  tooManyRows: 'Your query reads too many timeslice rows for the sandbox: narrow the time range or the metric names',
} as const;

export const MAX_BUCKETS = 366;
/**
 * Rows one query may read (about ten seconds of work). The sandbox can run inside the gateway's
 * process, so an unbounded query (every metric of the bulk app for years) must not stall it.
 * The gateway's largest queries (100 names over the whole data history, ~5M rows) stay below.
 */
export const MAX_ROWS = 10_000_000;

export interface NrqlScope {
  data: SandboxData;
  /** Accounts the query may read: apps of any other account do not exist for it. */
  accountIds: readonly number[];
  /** Epoch ms: the query's clock (default SINCE/UNTIL, and which rows exist yet). */
  now: number;
  /** Rows the query may read before it fails (default MAX_ROWS). */
  maxRows?: number;
}

export interface NrqlMetadata {
  eventTypes: string[];
  facets: string[];
  messages: string[];
  timeWindow: { begin: number; end: number; since: string; until: string; compareWith: null };
}

export interface NrqlOutcome {
  results: Array<Record<string, unknown>>;
  metadata: NrqlMetadata;
}

export interface Series {
  app: MetricOwner;
  metric: SandboxMetric;
  /** The instance whose share of the rows this is; null for the whole app's rows. */
  share: InstanceShare | null;
  /** Set when the rows are selected as a key transaction's: its GUID is their entity.guid. */
  keyTransaction?: SandboxKeyTransaction;
  /** The transaction these rows are scoped to (their `scope`); absent for unscoped rows. */
  scope?: TimesliceScope;
}

/** The behaviours one execution reads. */
export type EngineRules = Pick<SandboxBehaviours, 'strictAttributeTypes' | 'mobileGuidAttribute' | 'rollupSnapping' | 'unscopedRowsHaveNoScope'>;

/**
 * The behaviours (behaviours.ts) one execution follows. Set for the duration of one synchronous
 * executeNrql (nothing in it awaits, so no other query can interleave), rather than threaded
 * through every attribute read and comparison.
 */
let current: EngineRules = DEFAULT_BEHAVIOURS;

export function rules(): EngineRules {
  return current;
}

/** Runs `run` under the data's behaviours, then restores the previous ones. */
export function withRules<T>(data: SandboxData, run: () => T): T {
  const previous = current;
  // Data built before a behaviour existed (or by hand in a test) follows the defaults.
  current = { ...DEFAULT_BEHAVIOURS, ...data.behaviours };
  try {
    return run();
  } finally {
    current = previous;
  }
}
