import { ALERTS_KEPT_ALIVE } from '../common/alerts.ts';

/**
 * What the passthrough modules of the condition families NerdGraph cannot read or write say
 * about themselves: kept alive by New Relic, and what to use instead in NerdGraph (New Relic's
 * alerts migration guidance: NRQL conditions replace the metric condition types; synthetics
 * monitors are alerted on through NRQL conditions over SyntheticCheck).
 */
const instead = (what: string): string => `${ALERTS_KEPT_ALIVE} NerdGraph cannot read or write this condition type (only its DELETE is translated, through alertsConditionDelete); instead, ${what}`;

export const FamilyReasons = {
  apm: instead(
    'write a NRQL condition (alertsNrqlConditionStaticCreate) over the metric, e.g. SELECT average(apm.service.apdex) FROM Metric WHERE entity.guid = ..., or use the entity\'s golden-metric conditions.',
  ),
  externalService: instead("write a NRQL condition (alertsNrqlConditionStaticCreate) over the external call's metric, e.g. SELECT average(duration) FROM Span WHERE span.kind = 'client' AND http.url LIKE '...'."),
  synthetics: instead("alert on the monitor with a NRQL condition over SyntheticCheck (e.g. SELECT count(*) FROM SyntheticCheck WHERE monitorId = '...' AND result = 'FAILED')."),
  locationFailure: instead(
    "alert on the monitor's failing locations with a NRQL condition over SyntheticCheck, e.g. SELECT uniqueCount(location) FROM SyntheticCheck WHERE monitorId = '...' AND result = 'FAILED'.",
  ),
  entity: instead('find the conditions of an entity through NerdGraph entity search (alertSeverity, the entity\'s NRQL conditions by query) and link entities in the NRQL condition\'s query.'),
} as const;
