import { z } from 'zod';
import { decodeEntityGuid, type V2Body } from '../../src/mapping-api.ts';
import { alertV2Id } from './alert-id.ts';

/**
 * The v2 objects of the retired alert namespaces, made from NerdGraph's AI issues
 * (routes-next.md §5; reads in ai-issues.ts): a REST violation from an incident, a REST
 * incident from an issue, and alerts_events' events; and the NerdGraph items they are made
 * from, which ai-issues.ts reads.
 */

export const IncidentItem = z.object({
  incidentId: z.string(),
  title: z.string(),
  priority: z.string(),
  state: z.string(),
  createdAt: z.number(),
  closedAt: z.number().nullable().optional(),
  entityGuids: z.string().nullable().optional(),
  entityNames: z.string().nullable().optional(),
  entityTypes: z.string().nullable().optional(),
  conditionFamilyId: z.string().nullable().optional(),
  policyIds: z.string().nullable().optional(),
});
export type UpstreamIncident = z.infer<typeof IncidentItem>;

export const IssueItem = z.object({
  issueId: z.string(),
  state: z.string(),
  createdAt: z.number(),
  activatedAt: z.number().nullable().optional(),
  closedAt: z.number().nullable().optional(),
  policyIds: z.array(z.number()).nullable().optional(),
  incidentIds: z.array(z.string()).nullable().optional(),
});
export type UpstreamIssue = z.infer<typeof IssueItem>;

/** What a REST incident or violation shows of its policy. */
export interface PolicyFacts {
  name: string;
  incidentPreference: string;
}

const ENTITY_KINDS: Record<string, { product: string; type: string }> = {
  'APM|APPLICATION': { product: 'APM', type: 'Application' },
  'BROWSER|APPLICATION': { product: 'Browser', type: 'BrowserApplication' },
  'MOBILE|APPLICATION': { product: 'Mobile', type: 'MobileApplication' },
  'APM|KEY_TRANSACTION': { product: 'APM', type: 'KeyTransaction' },
  'INFRA|HOST': { product: 'Servers', type: 'Server' },
  'SYNTH|MONITOR': { product: 'Synthetics', type: 'Monitor' },
};

/**
 * A number NerdGraph sends as text (entity, policy, condition ids): up to 15 digits. Not a v2 id
 * a caller typed (ID_PATTERN), so 0 and leading zeros read as the number they write.
 */
export const upstreamNumber = (value: string | null | undefined): number | null => (value && /^\d{1,15}$/.test(value) ? Number(value) : null);

export interface NameDirectory {
  policies: ReadonlyMap<number, PolicyFacts>;
  conditions: ReadonlyMap<number, string>;
}

/** One REST violation from one NerdGraph incident. */
export function v2Violation(incident: UpstreamIncident, names: NameDirectory, now: number): V2Body {
  const decoded = incident.entityGuids ? decodeEntityGuid(incident.entityGuids) : undefined;
  const kind = decoded ? ENTITY_KINDS[`${decoded.domain}|${decoded.type}`] : undefined;
  const entityId = decoded ? upstreamNumber(decoded.domainId) : null;
  const policyId = upstreamNumber(incident.policyIds);
  const conditionId = upstreamNumber(incident.conditionFamilyId);
  const closedAt = incident.closedAt ?? null;
  return {
    id: alertV2Id(incident.incidentId),
    label: incident.title,
    duration: Math.floor(((closedAt ?? now) - incident.createdAt) / 1000),
    policy_name: (policyId !== null ? names.policies.get(policyId)?.name : undefined) ?? null,
    condition_name: (conditionId !== null ? names.conditions.get(conditionId) : undefined) ?? null,
    priority: incident.priority === 'CRITICAL' ? 'Critical' : 'Warning',
    opened_at: incident.createdAt,
    ...(closedAt === null ? {} : { closed_at: closedAt }),
    entity: { product: kind?.product ?? null, type: kind?.type ?? null, group_id: entityId, id: entityId, name: incident.entityNames ?? null },
    links: { policy_id: policyId, condition_id: conditionId },
  };
}

/** One REST incident from one NerdGraph issue. */
export function v2Incident(issue: UpstreamIssue, policies: ReadonlyMap<number, PolicyFacts>, withViolations: boolean): V2Body {
  const policyId = issue.policyIds?.[0] ?? null;
  const closedAt = issue.closedAt ?? null;
  return {
    id: alertV2Id(issue.issueId),
    opened_at: issue.activatedAt ?? issue.createdAt,
    ...(closedAt === null ? {} : { closed_at: closedAt }),
    incident_preference: (policyId !== null ? policies.get(policyId)?.incidentPreference : undefined) ?? null,
    links: { ...(withViolations ? { violations: (issue.incidentIds ?? []).map(alertV2Id) } : {}), policy_id: policyId },
  };
}

export const policyIdsOf = (issues: readonly UpstreamIssue[]): Set<number> => new Set(issues.flatMap((issue) => issue.policyIds?.slice(0, 1) ?? []));

/** VIOLATION_OPEN and (once closed) VIOLATION_CLOSE of one incident. */
export function violationEvents(incident: UpstreamIncident, issueV2Id: number | null, policies: ReadonlyMap<number, PolicyFacts>): V2Body[] {
  const decoded = incident.entityGuids ? decodeEntityGuid(incident.entityGuids) : undefined;
  const kind = decoded ? ENTITY_KINDS[`${decoded.domain}|${decoded.type}`] : undefined;
  const entityId = decoded ? upstreamNumber(decoded.domainId) : null;
  const policyId = upstreamNumber(incident.policyIds);
  const policyName = policyId !== null ? policies.get(policyId)?.name : undefined;
  const common = {
    product: kind ? kind.product.toUpperCase() : null,
    entity_type: kind?.type ?? null,
    entity_group_id: entityId,
    entity_id: entityId,
    priority: incident.priority === 'CRITICAL' ? 'Critical' : 'Warning',
    description: policyName === undefined ? incident.title : `${policyName} (${incident.title})`,
  };
  const event = (type: 'open' | 'close', at: number): V2Body => ({
    id: alertV2Id(`${incident.incidentId}|${type}`),
    event_type: type === 'open' ? 'VIOLATION_OPEN' : 'VIOLATION_CLOSE',
    ...common,
    timestamp: at,
    incident_id: issueV2Id,
  });
  const closedAt = incident.closedAt ?? null;
  return closedAt === null ? [event('open', incident.createdAt)] : [event('open', incident.createdAt), event('close', closedAt)];
}

/** One DEPLOYMENT event. */
export function deploymentEvent(id: number, appId: number, revision: string, timestamp: number): V2Body {
  return {
    id,
    event_type: 'DEPLOYMENT',
    product: 'APM',
    entity_type: 'Application',
    entity_group_id: appId,
    entity_id: appId,
    priority: null,
    description: `Deployment of revision ${revision}`,
    timestamp,
    incident_id: null,
  };
}
