import type { ParityReport, Readiness } from '../compare/parity-store.ts';
import { attr, badge, e } from './page-html.ts';

/**
 * The head of the /bridge/ page: what a migration lead reads first. How many of the routes in
 * use are safe to translate, and how many days are left until New Relic turns REST API v2 off.
 */

/** New Relic's end of life for the REST API v2 (README.md): the one place the date is kept. */
export const V2_END_OF_LIFE = '2027-07-31';
const DAY_MS = 86_400_000;

/**
 * Whole days from `now`'s UTC date to V2_END_OF_LIFE: 1 on the day before, 0 on the day itself
 * and after it.
 */
export function daysLeft(now: number, endOfLife: string = V2_END_OF_LIFE): number {
  const today = Math.floor(now / DAY_MS) * DAY_MS;
  return Math.max(0, Math.round((Date.parse(`${endOfLife}T00:00:00Z`) - today) / DAY_MS));
}

/** The rule the head counts by, as the page states it. */
export const SAFE_RULE =
  'A route (method and template) is in use once a caller has called it, in any mode. It is safe to translate when its readiness below is ' +
  '"safe to translate": compared with the legacy API (compare or candidate mode), at least one comparison agreed on a 2xx answer, ' +
  "no field differs beyond the legacy API's own noise, and no comparison failed. Unsupported, unmapped and passthrough-only routes never are.";

export interface HeadFigures {
  safe: number;
  inUse: number;
  daysLeft: number;
  /** The routes in use by readiness, most first. */
  byReadiness: Array<[Readiness, number]>;
}

export function headFigures(report: ParityReport, now: number): HeadFigures {
  const inUse = report.routes.filter((r) => r.requests > 0);
  const counts = new Map<Readiness, number>();
  for (const r of inUse) counts.set(r.readiness, (counts.get(r.readiness) ?? 0) + 1);
  return {
    safe: counts.get('safe to translate') ?? 0,
    inUse: inUse.length,
    daysLeft: daysLeft(now),
    byReadiness: [...counts].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0])),
  };
}

export function headSection(report: ParityReport, now: number): string {
  const figures = headFigures(report, now);
  const days = figures.daysLeft;
  const daysText =
    days === 0 ? `REST API v2 reached its end of life on ${V2_END_OF_LIFE}` : `day${days === 1 ? '' : 's'} left until the REST API v2 end of life, ${V2_END_OF_LIFE}`;
  const breakdown =
    figures.byReadiness.length === 0
      ? '<p class="empty">No route called yet.</p>'
      : `<p class="muted" id="in-use-readiness">Routes in use: ${figures.byReadiness.map(([readiness, n]) => `${badge(readiness)} ${n}`).join(' · ')}</p>`;
  return (
    '<section id="head"><div class="figures">' +
    `<p class="figure" id="safe-routes"><span class="big"><strong data-figure="safe">${figures.safe}</strong> of <strong data-figure="in-use">${figures.inUse}</strong></span> routes in use are safe to translate</p>` +
    `<p class="figure" id="days-left"><span class="big"><strong data-figure="days-left"${attr('data-end-of-life', V2_END_OF_LIFE)}>${days}</strong></span> ${e(daysText)}</p>` +
    `</div>${breakdown}<p class="muted" id="safe-rule">${e(SAFE_RULE)}</p></section>`
  );
}
