import { V2Error } from '../../src/mapping-api.ts';

/**
 * What every alert passthrough module says about itself: New Relic keeps these namespaces alive
 * after REST v2's end of life (rest-v2.md §0), so the gateway forwards them, never translates them.
 */
export const ALERTS_KEPT_ALIVE =
  'New Relic keeps this alert namespace alive after the REST v2 end of life: the legacy REST API answers it, unchanged.';

/** Show routes of alert objects are not in New Relic's v2 documentation; forwarded anyway. */
export const SHOW_UNCONFIRMED = 'GET of one object is UNCONFIRMED in REST v2: forwarded as sent, the legacy API answers whatever it does (no probe: nothing is translated, so there is nothing to compare).';

/**
 * The items of a cursor walk that read its list to the end; a walk cut at its page bound is
 * refused whole, never shown as a complete list (a sync script creating what it does not find
 * would create duplicates). 422, not 503: asking again meets the same bound, and clients such as
 * newrelic-client-go retry a 503 (each retry another full walk), not a 422.
 */
export function wholeList<T>(walked: { items: T[]; truncated: boolean }, title: string): T[] {
  if (walked.truncated) throw new V2Error(422, title, { kind: 'list_too_large' });
  return walked.items;
}
