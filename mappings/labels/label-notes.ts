import { type FieldNote, type KnownGap } from '../../src/mapping-api.ts';
import { LABELS_PAGE_SIZE, MAX_LABEL_APPLICATIONS } from './label-rules.ts';

/** Field notes, gaps and assumptions every label route shares (routes-next.md §6, rest-v2-shapes.md §10). */
export const LABEL_FIELDS = (prefix: string): FieldNote[] => [
  { field: `${prefix}.key`, fidelity: 'exact', source: '`<tag key>:<tag value>`' },
  { field: `${prefix}.category`, fidelity: 'exact', source: 'tag key' },
  { field: `${prefix}.name`, fidelity: 'exact', source: 'tag value' },
  { field: `${prefix}.links.applications`, fidelity: 'exact', source: 'applicationId of every APM application carrying the tag value, ascending' },
  {
    field: `${prefix}.application_health_status`,
    fidelity: 'approximate',
    source: 'the applications bucketed by alertSeverity while reporting (CRITICAL red, WARNING orange, NOT_ALERTING green); not reporting or no alert conditions: gray',
  },
  { field: `${prefix}.origins`, fidelity: 'approximate', source: 'no source: apm = links.applications, synthetics and agents empty' },
  { field: `${prefix}.links.servers / server_health_status`, fidelity: 'approximate', source: 'always empty: Servers were retired (May 15, 2018) and have no entity' },
];

export const LABEL_GAPS: readonly KnownGap[] = [
  {
    description:
      'origins has no NerdGraph source: every application is shown under origins.apm, none under agents (labels set in an agent\'s config file) or synthetics.',
  },
  { description: 'Labels on servers are gone with Servers (EOL May 15, 2018): links.servers and server_health_status are always empty.' },
  {
    description:
      'Tags New Relic sets itself (account, accountId, trustedAccountId, guid, language, agentVersion, host, hostname, ... and nr.* / newrelic.* keys, matched case-sensitively) are not labels; any other tag key on an APM application is one, including tags set in New Relic One rather than through v2.',
  },
  { description: 'Only APM applications are read (at most 10,000): tags on browser, mobile or other entities are not labels here.' },
  {
    description:
      'Entity search shows a tag write only once indexed (seconds, by New Relic\'s design). A label change made through the gateway (any replica) is applied to what entity search answers until it shows it, for at most 10 minutes (src/state/recent-writes.ts); a change made elsewhere (New Relic One, NerdGraph, an agent) shows only once indexed, as v2 never had to wait.',
  },
];

export const LABEL_ASSUMPTIONS: readonly string[] = [
  'The label Category:Name is the entity tag key Category with the value Name (routes-next.md §6, INFER); keys and values match exactly (case-sensitive).',
  `Labels are ordered by category then name, ${LABELS_PAGE_SIZE} per page (v2's order and size are UNCONFIRMED; no probe: a page size shows only on an account with more than a page of items, where the route comparison of npm run probe finds the route disagreeing).`,
  'An application without alert conditions (v2 health "unknown") is counted gray in application_health_status (UNCONFIRMED; no probe: the route comparison of /v2/labels shows it where a labelled app has no alert condition).',
];

export const LABEL_WRITE_GAPS: readonly KnownGap[] = [
  {
    description:
      'v2 changed a label in one call; NerdGraph tags one entity per mutation, so the gateway sends one mutation per application, in order, each after the one before was confirmed. The first mutation fails as a deployment does (503 "nothing was changed" only when it was never sent, else an unknown outcome); any failure once one was sent answers 502 with a title saying the label may have been changed on some or all of the applications named: list the labels before retrying. Nothing is ever resent.',
  },
  {
    description: `At most ${MAX_LABEL_APPLICATIONS} applications per request (one mutation each, one after the other, all inside the request's deadline): more is a 422 that says to send them in batches; v2 stated no limit.`,
  },
  { description: 'Servers in links.servers are refused (422): Servers were retired and have no entity to tag.' },
];

export const LABEL_WRITE_ASSUMPTIONS: readonly string[] = [
  'An application id the account does not have is refused (422, nothing written) before anything is sent; v2\'s answer is UNCONFIRMED (no probe: it is a write\'s answer, and the probe never writes).',
  'Success is 200 with {"label": ...} as the label stands afterwards (v2\'s status is UNCONFIRMED; clients accept any 2xx; no probe: it is a write\'s answer, and the probe never writes).',
  'The body may be JSON, XML or a form (label[category]=...&label[links][applications][]=1). In JSON links.applications must be an array; XML and forms may also give one id or comma-separated ids, and XML Rails\' list element (<applications type="array"><application>1</application></applications>). A form giving both applications= and applications[]= is refused (400).',
];
