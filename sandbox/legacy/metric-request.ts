/**
 * What a legacy metric request carries (metrics.ts answers it): whose rows it reads, its
 * parameters and clock. Apart from metrics.ts, so its parameter and formula parts
 * (metric-params.ts, metric-formulas.ts) read it without importing the endpoints.
 */
import type { SandboxData } from '../model.ts';
import type { MetricOwner, SandboxMetric, TimesliceRow } from '../timeslices.ts';
import type { V2Format } from './wire.ts';

/** Whose metrics a request reads: the owner's catalog, and the target's rows of a metric. */
export interface MetricSource {
  owner: MetricOwner;
  /** The target's rows starting in [since, until), oldest first (rowsOf, hostRowsOf, instanceRowsOf). */
  rowsOf(metric: SandboxMetric, since: number, until: number, now: number): TimesliceRow[];
}

export interface MetricRequest {
  source: MetricSource;
  data: SandboxData;
  format: V2Format;
  /** The request clock, epoch ms. */
  now: number;
  /** Every value of a parameter in any spelling (`names[]`, `names`, `names[0]`), query string first, then the form body. */
  param(key: string): string[];
  ifNoneMatch: string | undefined;
  /** Legacy jitter (createSandbox `legacyJitter`): a draw in [0, 1) per call; absent when off. */
  jitter?: () => number;
}

/** `nameAlias`: a single `name` is one more name (MOBILE-REST sends `name=Mobile/Crash/All`). */
export interface DataOptions {
  nameAlias?: boolean;
}
