/**
 * What every alert passthrough module says about itself: New Relic keeps these namespaces alive
 * after REST v2's end of life (rest-v2.md §0), so the gateway forwards them, never translates them.
 */
export const ALERTS_KEPT_ALIVE =
  'New Relic keeps this alert namespace alive after the REST v2 end of life: the legacy REST API answers it, unchanged.';

/** Show routes of alert objects are not in New Relic's v2 documentation; forwarded anyway. */
export const SHOW_UNCONFIRMED = 'GET of one object is UNCONFIRMED in REST v2: forwarded as sent, the legacy API answers whatever it does.';
