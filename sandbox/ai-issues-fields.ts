/**
 * The NerdGraph face of the sandbox's alert issues (ai-issues.ts): `Account.aiIssues {issues,
 * incidents}` (cursor pages of AI_ISSUES_PAGE_SIZE, newest first, in a time window),
 * `Account.alerts {policy, policiesSearch, nrqlConditionsSearch, nrqlCondition}` over the alert
 * store (alerts.ts; NRQL conditions as nrql-condition-fields.ts shows them), and the `aiIssuesAckIssue` / `aiIssuesResolveIssue` mutations.
 */
import { GraphQLError } from 'graphql';
import type { AlertPolicy } from './alerts.ts';
import { nrqlConditionView } from './nrql-condition-fields.ts';
import { absentNrqlCondition, shownNrqlCondition } from './nrql-condition-facts.ts';
import type { SandboxData } from './model.ts';
import { decodeCursor, hashText, pageOf } from './search-paging.ts';
import {
  AI_ISSUES_PAGE_SIZE,
  ALERTS_SEARCH_PAGE_SIZE,
  DEFAULT_TIME_WINDOW_MS,
  acknowledgeIssue,
  allIssuesOf,
  closeIssue,
  incidentsOf,
  issuesOf,
  policyOf,
  type SandboxIncident,
  type SandboxIssue,
} from './ai-issues.ts';
// ---------------------------------------------------------------------------------------------
// The NerdGraph face

interface TimeWindowArgument {
  startTime: number;
  endTime: number;
}

interface IssuesArguments {
  cursor?: string | null;
  filter?: { ids?: string[] | null; states?: string[] | null; policyIds?: number[] | null } | null;
  timeWindow?: TimeWindowArgument | null;
}

interface IncidentsArguments {
  cursor?: string | null;
  filter?: { ids?: string[] | null; states?: string[] | null; entityGuids?: string[] | null; priority?: string[] | null; entityTypes?: string[] | null } | null;
  timeWindow?: TimeWindowArgument | null;
}

const invalidInput = (message: string): GraphQLError => new GraphQLError(message, { extensions: { errorClass: 'INVALID_INPUT' } });

function windowOf(timeWindow: TimeWindowArgument | null | undefined, now: number): [number, number] {
  if (!timeWindow) return [now - DEFAULT_TIME_WINDOW_MS, now];
  if (timeWindow.startTime > timeWindow.endTime) throw invalidInput('timeWindow: startTime must not be after endTime');
  return [timeWindow.startTime, timeWindow.endTime];
}

const issueState = (issue: SandboxIssue): string => (issue.closedAt !== null ? 'CLOSED' : 'ACTIVATED');
const incidentState = (incident: SandboxIncident): string => (incident.closedAt !== null ? 'CLOSED' : 'CREATED');

function nerdgraphIssue(issue: SandboxIssue): Record<string, unknown> {
  return {
    issueId: issue.issueId,
    state: issueState(issue),
    title: [issue.title],
    priority: issue.priority,
    createdAt: issue.createdAt,
    activatedAt: issue.createdAt,
    updatedAt: issue.closedAt ?? issue.acknowledgedAt ?? issue.createdAt,
    closedAt: issue.closedAt,
    acknowledgedAt: issue.acknowledgedAt,
    policyIds: [issue.policyId],
    conditionFamilyId: [issue.conditionId],
    incidentIds: issue.incidents.map((incident) => incident.incidentId),
    totalIncidents: issue.incidents.length,
    entityGuids: [...new Set(issue.incidents.map((incident) => incident.target.guid))],
  };
}

function nerdgraphIncident(incident: SandboxIncident): Record<string, unknown> {
  return {
    __typename: 'AiIssuesNewRelicIncident',
    incidentId: incident.incidentId,
    title: incident.title,
    description: [incident.title],
    priority: incident.priority,
    state: incidentState(incident),
    createdAt: incident.createdAt,
    updatedAt: incident.closedAt ?? incident.createdAt,
    closedAt: incident.closedAt,
    timestamp: incident.closedAt ?? incident.createdAt,
    accountIds: String(incident.accountId),
    entityGuids: incident.target.guid,
    entityNames: incident.target.name,
    entityTypes: incident.target.type,
    conditionFamilyId: String(incident.conditionId),
    policyIds: String(incident.policyId),
  };
}

function paged<T>(items: T[], cursor: string | null | undefined, what: unknown, pageSize: number): { items: T[]; nextCursor: string | null } {
  const hash = hashText(JSON.stringify(what));
  return pageOf(items, decodeCursor(cursor, hash, items.length), pageSize, hash);
}

/** `Account.aiIssues` of one visible account. */
export function aiIssuesFields(data: SandboxData, accountId: number, now: number) {
  return {
    issues: (args: IssuesArguments) => {
      const [from, to] = windowOf(args.timeWindow, now);
      const { ids, states, policyIds } = args.filter ?? {};
      const list = issuesOf(data, accountId, from, to, now).filter(
        (issue) =>
          (!ids || ids.includes(issue.issueId)) &&
          (!states || states.includes(issueState(issue))) &&
          (!policyIds || policyIds.includes(issue.policyId)),
      );
      const page = paged(list, args.cursor, ['issues', accountId, from, to, args.filter ?? null], AI_ISSUES_PAGE_SIZE);
      return { issues: page.items.map(nerdgraphIssue), nextCursor: page.nextCursor };
    },
    incidents: (args: IncidentsArguments) => {
      const [from, to] = windowOf(args.timeWindow, now);
      const { ids, states, entityGuids, priority, entityTypes } = args.filter ?? {};
      const list = incidentsOf(data, accountId, from, to, now).filter(
        (incident) =>
          (!ids || ids.includes(incident.incidentId)) &&
          (!states || states.includes(incidentState(incident))) &&
          (!entityGuids || entityGuids.includes(incident.target.guid)) &&
          (!priority || priority.includes(incident.priority)) &&
          (!entityTypes || entityTypes.includes(incident.target.type)),
      );
      const page = paged(list, args.cursor, ['incidents', accountId, from, to, args.filter ?? null], AI_ISSUES_PAGE_SIZE);
      return { incidents: page.items.map(nerdgraphIncident), nextCursor: page.nextCursor };
    },
  };
}

interface PoliciesSearchArguments {
  cursor?: string | null;
  searchCriteria?: { ids?: string[] | null; name?: string | null; nameLike?: string | null } | null;
}

interface NrqlConditionsSearchArguments {
  cursor?: string | null;
  searchCriteria?: { policyId?: string | null; name?: string | null; nameLike?: string | null } | null;
}

const policyOutline = (policy: AlertPolicy) => ({ id: String(policy.id), name: policy.name, accountId: policy.accountId, incidentPreference: policy.incidentPreference });

/** `Account.alerts`: the policies and NRQL conditions of the alert store, as NerdGraph shows them. */
export function alertsFields(data: SandboxData, accountId: number) {
  return {
    policy: ({ id }: { id: string }) => {
      const policy = /^[1-9]\d{0,14}$/.test(String(id)) ? policyOf(data, accountId, Number(id)) : undefined;
      return policy ? policyOutline(policy) : null;
    },
    policiesSearch: (args: PoliciesSearchArguments) => {
      const { ids, name, nameLike } = args.searchCriteria ?? {};
      const list = data.alerts.policies
        .filter((p) => p.accountId === accountId)
        .filter((p) => !ids || ids.includes(String(p.id)))
        .filter((p) => !name || p.name === name)
        .filter((p) => !nameLike || p.name.toLowerCase().includes(nameLike.toLowerCase()))
        .sort((a, b) => a.id - b.id);
      const page = paged(list, args.cursor, ['policies', accountId, args.searchCriteria ?? null, list.length], ALERTS_SEARCH_PAGE_SIZE);
      return { policies: page.items.map(policyOutline), nextCursor: page.nextCursor, totalCount: list.length };
    },
    nrqlCondition: ({ id }: { id: string }) => {
      const condition = /^[1-9]\d{0,14}$/.test(String(id))
        ? data.alerts.conditions.find((c) => c.accountId === accountId && c.family === 'alerts_nrql_conditions' && c.id === Number(id))
        : undefined;
      if (!condition) return /^[1-9]\d{0,14}$/.test(String(id)) ? absentNrqlCondition(data.alerts.conditions, accountId, Number(id), data.behaviours) : null;
      return shownNrqlCondition(nrqlConditionView(condition), data.behaviours);
    },
    nrqlConditionsSearch: (args: NrqlConditionsSearchArguments) => {
      const { policyId, name, nameLike } = args.searchCriteria ?? {};
      const list = data.alerts.conditions
        .filter((c) => c.accountId === accountId && c.family === 'alerts_nrql_conditions')
        .filter((c) => !policyId || String(c.policyId) === String(policyId))
        .filter((c) => !name || c.fields.name === name)
        .filter((c) => !nameLike || String(c.fields.name).toLowerCase().includes(nameLike.toLowerCase()))
        .sort((a, b) => a.id - b.id);
      const page = paged(list, args.cursor, ['nrql', accountId, args.searchCriteria ?? null, list.length], ALERTS_SEARCH_PAGE_SIZE);
      return {
        nrqlConditions: page.items.map((condition) => shownNrqlCondition(nrqlConditionView(condition), data.behaviours)),
        nextCursor: page.nextCursor,
        totalCount: list.length,
      };
    },
  };
}

export const AiIssuesMessages = {
  issueNotFound: 'Issue not found',
  alreadyClosed: 'Issue is already closed',
} as const;

/**
 * `aiIssuesAckIssue` / `aiIssuesResolveIssue` on a visible account: a GraphQL error (nothing
 * written, nothing counted) for an unknown issue or one already closed.
 */
export function issueAction(data: SandboxData, accountId: number, issueId: string, action: 'ACK' | 'RESOLVE', now: number) {
  const issue = allIssuesOf(data, accountId, now).find((candidate) => candidate.issueId === String(issueId));
  if (!issue) throw new GraphQLError(AiIssuesMessages.issueNotFound, { extensions: { errorClass: 'NOT_FOUND' } });
  if (issue.closedAt !== null) throw invalidInput(AiIssuesMessages.alreadyClosed);
  if (action === 'ACK') acknowledgeIssue(data, issue.issueId, now);
  else closeIssue(data, issue.issueId, now);
  return { error: null, result: { accountId, action, issueId: issue.issueId } };
}
