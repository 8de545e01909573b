import { ALERT_ISSUE_RULE_TITLES } from '../../facts/rule-titles.ts';

/**
 * Titles of alerts_incidents, alerts_violations and alerts_events (ai-issues.ts, alert-params.ts):
 * v2's own texts are unconfirmed; both faces word them alike (facts/rule-titles.ts).
 */
export const AlertIncidentTitles = ALERT_ISSUE_RULE_TITLES;
