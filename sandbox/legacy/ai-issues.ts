/**
 * The legacy face of REST v2's retired alert namespaces: `alerts_violations`,
 * `alerts_incidents` (list, acknowledge, close) and `alerts_events`, rendered the way v2 did
 * (rest-v2-shapes.md §9) from the sandbox's issues and incidents (../ai-issues.ts).
 *
 * Choices where v2 is unconfirmed (the gateway's mappings make the same ones): 200 items per
 * page, newest first; violations' Link header never has rel="last" (rest-v2.md §3.9);
 * `start_date`/`end_date` (and `filter[start_time]`/`filter[end_time]`) bound opened_at;
 * priority `Critical` for CRITICAL and `Warning` for the others; acknowledge or close of a
 * closed incident is 422 "Incident already closed"; ids are the face's own row ids of the NerdGraph ids
 * (not the ids the gateway derives: the differential tests compare records, not ids).
 */
import { AlertIncidentTitles } from './titles.ts';
import { V2Error, invalidParameter, notFound, type V2Body } from './wire.ts';
import { guidParts, hashedRowId } from '../ids.ts';

/** The legacy face's id of an issue (v2 incident), incident (v2 violation) or event: its own row id (../ids.ts). */
export const legacyAlertId = (key: string): number => hashedRowId('alert', key);
const alertV2Id = legacyAlertId;
import { deploymentsOf } from '../writes.ts';
import { parseTime } from './metric-params.ts';
import { allIssuesOf, closeIssue, acknowledgeIssue, incidentsOf, policyOf, type SandboxIncident, type SandboxIssue } from '../ai-issues.ts';
import type { SandboxData } from '../model.ts';
import { pageOf, send, valuesOf, type LegacyRequest, type LegacyRoute, type Pairs } from './common.ts';
import { ALERT_EVENT_ENTITY_TYPES, ALERT_EVENT_PRODUCTS, ALERT_EVENT_TYPES } from '../../facts/v2-values.ts';
import { REQUEST_RULE_TITLES } from '../../facts/rule-titles.ts';

export const AI_ISSUES_V2_PAGE_SIZE = 200;

const ENTITY_KINDS: Record<string, { product: string; type: string }> = {
  'APM|APPLICATION': { product: 'APM', type: 'Application' },
  'BROWSER|APPLICATION': { product: 'Browser', type: 'BrowserApplication' },
  'MOBILE|APPLICATION': { product: 'Mobile', type: 'MobileApplication' },
  'APM|KEY_TRANSACTION': { product: 'APM', type: 'KeyTransaction' },
};

function flag(pairs: Pairs, key: string): boolean {
  const value = valuesOf(pairs, key).at(-1);
  if (value === undefined) return false;
  const text = value.trim().toLowerCase();
  if (['true', '1', 'yes', 'on', 't'].includes(text)) return true;
  if (['false', '0', 'no', 'off', 'f', ''].includes(text)) return false;
  throw invalidParameter(REQUEST_RULE_TITLES.boolean(key));
}

function time(pairs: Pairs, key: string): number | undefined {
  const value = valuesOf(pairs, key).at(-1);
  if (value === undefined || value.trim() === '') return undefined;
  // The times v2 clients send (client-behaviour.md §4), read as metric data reads them.
  const seconds = parseTime(value.trim());
  if (seconds === undefined) throw invalidParameter(AlertIncidentTitles.badTime(key));
  return seconds * 1000;
}

function violationBody(data: SandboxData, incident: SandboxIncident, now: number): V2Body {
  const decoded = guidParts(incident.target.guid);
  const kind = ENTITY_KINDS[`${decoded?.domain}|${decoded?.type}`];
  const entityId = decoded ? Number(decoded.domainId) : null;
  const policy = policyOf(data, incident.accountId, incident.policyId);
  const condition = data.alerts.conditions.find((c) => c.accountId === incident.accountId && c.id === incident.conditionId);
  return {
    id: alertV2Id(incident.incidentId),
    label: incident.title,
    duration: Math.floor(((incident.closedAt ?? now) - incident.createdAt) / 1000),
    policy_name: policy?.name ?? null,
    condition_name: condition && typeof condition.fields.name === 'string' ? condition.fields.name : null,
    priority: incident.priority === 'CRITICAL' ? 'Critical' : 'Warning',
    opened_at: incident.createdAt,
    ...(incident.closedAt === null ? {} : { closed_at: incident.closedAt }),
    entity: { product: kind?.product ?? null, type: kind?.type ?? null, group_id: entityId, id: entityId, name: incident.target.name },
    links: { policy_id: incident.policyId, condition_id: incident.conditionId },
  };
}

function incidentBody(data: SandboxData, issue: SandboxIssue, withViolations: boolean): V2Body {
  const policy = policyOf(data, issue.accountId, issue.policyId);
  return {
    id: alertV2Id(issue.issueId),
    opened_at: issue.createdAt,
    ...(issue.closedAt === null ? {} : { closed_at: issue.closedAt }),
    incident_preference: policy?.incidentPreference ?? null,
    links: { ...(withViolations ? { violations: issue.incidents.map((incident) => alertV2Id(incident.incidentId)) } : {}), policy_id: issue.policyId },
  };
}

/** v2's Link without rel="last" (alerts_violations never sent it). */
function withoutLast(link: string | undefined): string | undefined {
  if (link === undefined) return undefined;
  const kept = link.split(', ').filter((entry) => !entry.endsWith('rel="last"'));
  return kept.length > 0 ? kept.join(', ') : undefined;
}

function listViolations(req: LegacyRequest): Response {
  const onlyOpen = flag(req.params, 'only_open') || flag(req.params, 'filter[only_open]');
  const start = time(req.params, 'start_date') ?? time(req.params, 'filter[start_time]');
  const end = time(req.params, 'end_date') ?? time(req.params, 'filter[end_time]');
  if (start !== undefined && end !== undefined && end < start) throw invalidParameter(AlertIncidentTitles.timeOrder);
  const page = pageOf(req.params);
  const list = incidentsOf(req.data, req.accountId, start ?? Number.NEGATIVE_INFINITY, end ?? Number.POSITIVE_INFINITY, req.now).filter(
    (incident) => !onlyOpen || incident.closedAt === null,
  );
  const items = list.slice((page - 1) * AI_ISSUES_V2_PAGE_SIZE, page * AI_ISSUES_V2_PAGE_SIZE).map((incident) => violationBody(req.data, incident, req.now));
  const link = withoutLast(req.link(page, Math.ceil(list.length / AI_ISSUES_V2_PAGE_SIZE)));
  return send(req.format, 200, { violations: items }, link ? { link } : {});
}

function listIncidents(req: LegacyRequest): Response {
  const onlyOpen = flag(req.params, 'only_open');
  const excludeViolations = flag(req.params, 'exclude_violations');
  const page = pageOf(req.params);
  const list = allIssuesOf(req.data, req.accountId, req.now).filter((issue) => !onlyOpen || issue.closedAt === null);
  const items = list.slice((page - 1) * AI_ISSUES_V2_PAGE_SIZE, page * AI_ISSUES_V2_PAGE_SIZE).map((issue) => incidentBody(req.data, issue, !excludeViolations));
  const link = req.link(page, Math.ceil(list.length / AI_ISSUES_V2_PAGE_SIZE));
  return send(req.format, 200, { incidents: items }, link ? { link } : {});
}

function incidentAction(req: LegacyRequest, action: 'acknowledge' | 'close'): Response {
  const raw = req.path.id ?? '';
  const id = /^[1-9]\d{0,15}$/.test(raw) ? Number(raw) : undefined;
  const issue = id === undefined ? undefined : allIssuesOf(req.data, req.accountId, req.now).find((candidate) => alertV2Id(candidate.issueId) === id);
  if (!issue) throw notFound(AlertIncidentTitles.incidentNotFound);
  if (issue.closedAt !== null) throw new V2Error(422, AlertIncidentTitles.alreadyClosed);
  if (action === 'acknowledge') acknowledgeIssue(req.data, issue.issueId, req.now);
  else closeIssue(req.data, issue.issueId, req.now);
  const after = allIssuesOf(req.data, req.accountId, req.now).find((candidate) => candidate.issueId === issue.issueId) ?? issue;
  return send(req.format, 200, { incident: incidentBody(req.data, after, true) });
}

// ---------------------------------------------------------------------------------------------
// alerts_events: the last 30 days of violation opens and closes, and deployments

const EVENTS_WINDOW_MS = 30 * 86_400_000;
// v2's filter values: facts/v2-values.ts.
const PRODUCTS = ALERT_EVENT_PRODUCTS;
const ENTITY_TYPES = ALERT_EVENT_ENTITY_TYPES;
const EVENT_TYPES = ALERT_EVENT_TYPES;

function oneOf(pairs: Pairs, key: string, allowed: readonly string[]): string | undefined {
  const value = valuesOf(pairs, key).at(-1)?.trim();
  if (value === undefined || value === '') return undefined;
  const found = allowed.find((candidate) => candidate.toLowerCase() === value.toLowerCase());
  if (found === undefined) throw invalidParameter(AlertIncidentTitles.badFilter(key, allowed));
  return found;
}

function idOf(pairs: Pairs, key: string): number | undefined {
  const value = valuesOf(pairs, key).at(-1)?.trim();
  if (value === undefined || value === '') return undefined;
  if (!/^[1-9]\d{0,15}$/.test(value) || !Number.isSafeInteger(Number(value))) throw invalidParameter(AlertIncidentTitles.badId(key));
  return Number(value);
}

function violationEvents(data: SandboxData, incident: SandboxIncident): V2Body[] {
  const violation = violationBody(data, incident, 0);
  const entity = violation.entity as { product: string | null; type: string | null; id: number | null };
  const policy = policyOf(data, incident.accountId, incident.policyId);
  const event = (type: 'open' | 'close', at: number): V2Body => ({
    id: alertV2Id(`${incident.incidentId}|${type}`),
    event_type: type === 'open' ? 'VIOLATION_OPEN' : 'VIOLATION_CLOSE',
    product: entity.product === null ? null : entity.product.toUpperCase(),
    entity_type: entity.type,
    entity_group_id: entity.id,
    entity_id: entity.id,
    priority: violation.priority ?? null,
    description: policy ? `${policy.name} (${incident.title})` : incident.title,
    timestamp: at,
    incident_id: alertV2Id(incident.issueId),
  });
  return incident.closedAt === null ? [event('open', incident.createdAt)] : [event('open', incident.createdAt), event('close', incident.closedAt)];
}

function listEvents(req: LegacyRequest): Response {
  const product = oneOf(req.params, 'filter[product]', PRODUCTS);
  const entityType = oneOf(req.params, 'filter[entity_type]', ENTITY_TYPES);
  const groupId = idOf(req.params, 'filter[entity_group_id]');
  const entityId = idOf(req.params, 'filter[entity_id]');
  const eventType = oneOf(req.params, 'filter[event_type]', EVENT_TYPES);
  const incidentId = idOf(req.params, 'filter[incident_id]');
  const page = pageOf(req.params);
  const since = req.now - EVENTS_WINDOW_MS;
  const events: V2Body[] = incidentsOf(req.data, req.accountId, since, req.now, req.now).flatMap((incident) => violationEvents(req.data, incident));
  for (const app of req.data.apps.filter((candidate) => candidate.accountId === req.accountId)) {
    for (const deployment of deploymentsOf(req.data, app)) {
      if (deployment.timestamp < since || deployment.timestamp >= req.now + 60_000) continue;
      events.push({
        id: deployment.id,
        event_type: 'DEPLOYMENT',
        product: 'APM',
        entity_type: 'Application',
        entity_group_id: app.id,
        entity_id: app.id,
        priority: null,
        description: `Deployment of revision ${deployment.revision}`,
        timestamp: deployment.timestamp,
        incident_id: null,
      });
    }
  }
  const shown = events
    .filter(
      (event) =>
        (product === undefined || String(event.product) === product) &&
        (entityType === undefined || event.entity_type === entityType) &&
        (groupId === undefined || event.entity_group_id === groupId) &&
        (entityId === undefined || event.entity_id === entityId) &&
        (eventType === undefined || event.event_type === eventType || (eventType === 'VIOLATION' && String(event.event_type).startsWith('VIOLATION_'))) &&
        (incidentId === undefined || event.incident_id === incidentId),
    )
    .sort((a, b) => Number(b.timestamp) - Number(a.timestamp) || Number(a.id) - Number(b.id));
  const items = shown.slice((page - 1) * AI_ISSUES_V2_PAGE_SIZE, page * AI_ISSUES_V2_PAGE_SIZE);
  const link = req.link(page, Math.ceil(shown.length / AI_ISSUES_V2_PAGE_SIZE));
  return send(req.format, 200, { recent_events: items }, link ? { link } : {});
}

export const AI_ISSUES_ROUTES: readonly LegacyRoute[] = [
  { template: '/v2/alerts_violations.{format}', methods: ['GET'], handler: listViolations },
  { template: '/v2/alerts_incidents.{format}', methods: ['GET'], handler: listIncidents },
  { template: '/v2/alerts_events.{format}', methods: ['GET'], handler: listEvents },
  // No body, but `own` makes them writes the face counts (write-counts.ts).
  { template: '/v2/alerts_incidents/{id}/acknowledge.{format}', methods: ['PUT'], body: 'own', handler: (req) => incidentAction(req, 'acknowledge') },
  { template: '/v2/alerts_incidents/{id}/close.{format}', methods: ['PUT'], body: 'own', handler: (req) => incidentAction(req, 'close') },
];
