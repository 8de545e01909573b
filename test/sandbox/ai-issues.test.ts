import { describe, expect, it } from 'vitest';
import { AI_ISSUES_PAGE_SIZE, allIssuesOf, incidentsOf } from '../../sandbox/ai-issues.ts';
import { createSandbox } from '../../sandbox/server.ts';
import { legacyAlertId as alertV2Id } from '../../sandbox/legacy/ai-issues.ts';
import { DEMO_KEY, FIXED_NOW, PRIMARY_ACCOUNT, SECONDARY_ACCOUNT } from '../support/harness.ts';

/**
 * The sandbox's alert issues and incidents (ai-issues.ts): a pure function of the clock and the
 * seed, closing over time, with acknowledge and close kept on top; served by NerdGraph's
 * aiIssues (cursor pages), alerts.policiesSearch / nrqlConditionsSearch and the two mutations.
 */
const HOUR = 3_600_000;

function world(now: () => number = () => FIXED_NOW) {
  return createSandbox({ seed: 7, apmApps: 120, now });
}

async function graphql(sandbox: ReturnType<typeof world>, query: string, variables: Record<string, unknown> = {}, key = DEMO_KEY) {
  const response = await sandbox.app.request('/graphql', { method: 'POST', headers: { 'content-type': 'application/json', 'api-key': key }, body: JSON.stringify({ query, variables }) });
  return (await response.json()) as { data?: Record<string, unknown> | null; errors?: Array<{ message: string; extensions?: { errorClass?: string } }> };
}

const ISSUES = `query($a: Int!, $cursor: String, $filter: AiIssuesFilterIssues, $w: TimeWindowInput) { actor { account(id: $a) { aiIssues {
  issues(cursor: $cursor, filter: $filter, timeWindow: $w) { nextCursor issues { issueId state createdAt closedAt acknowledgedAt incidentIds policyIds } } } } } }`;

describe('sandbox alert issues and incidents', () => {
  it('are the same for the same seed and clock, and enough for 3+ v2 pages of 200', () => {
    const a = allIssuesOf(world().data, PRIMARY_ACCOUNT, FIXED_NOW);
    const b = allIssuesOf(world().data, PRIMARY_ACCOUNT, FIXED_NOW);
    expect(a).toEqual(b);
    expect(a.length).toBeGreaterThan(400);
    expect(incidentsOf(world().data, PRIMARY_ACCOUNT, -Infinity, Infinity, FIXED_NOW).length).toBeGreaterThan(600);
    expect(a.some((issue) => issue.closedAt === null)).toBe(true);
    expect(a.some((issue) => issue.closedAt !== null)).toBe(true);
    expect(allIssuesOf(world().data, SECONDARY_ACCOUNT, FIXED_NOW).length).toBeGreaterThan(0);
    // The legacy face's v2 ids do not collide.
    expect(new Set(a.map((issue) => alertV2Id(issue.issueId))).size).toBe(a.length);
  });

  it('open and close over the clock: later clocks keep history, close what has ended and open new ones', () => {
    const data = world().data;
    const now = allIssuesOf(data, PRIMARY_ACCOUNT, FIXED_NOW);
    const later = allIssuesOf(data, PRIMARY_ACCOUNT, FIXED_NOW + 12 * HOUR);
    const byId = new Map(later.map((issue) => [issue.issueId, issue]));
    for (const issue of now) {
      const after = byId.get(issue.issueId)!;
      expect(after.createdAt).toBe(issue.createdAt);
      if (issue.closedAt !== null) expect(after.closedAt).toBe(issue.closedAt);
    }
    expect(now.some((issue) => issue.closedAt === null && byId.get(issue.issueId)!.closedAt !== null)).toBe(true);
    expect(later.length).toBeGreaterThan(now.length);
    // Nothing in the future, nothing open with a close time.
    for (const issue of later) {
      expect(issue.createdAt).toBeLessThanOrEqual(FIXED_NOW + 12 * HOUR);
      for (const incident of issue.incidents) expect(incident.closedAt === null || incident.closedAt <= FIXED_NOW + 12 * HOUR).toBe(true);
    }
  });

  it('pages issues by cursor, newest first, in the time window; refuses a foreign cursor', async () => {
    const sandbox = world();
    const w = { startTime: FIXED_NOW - 30 * 24 * HOUR, endTime: FIXED_NOW };
    const seen: Array<{ issueId: string; createdAt: number }> = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const answer = await graphql(sandbox, ISSUES, { a: PRIMARY_ACCOUNT, cursor, w });
      const data = (answer.data as any).actor.account.aiIssues.issues; // eslint-disable-line @typescript-eslint/no-explicit-any -- a test reads the raw answer
      expect(data.issues.length).toBeLessThanOrEqual(AI_ISSUES_PAGE_SIZE);
      seen.push(...data.issues);
      cursor = data.nextCursor;
      pages++;
    } while (cursor !== null && pages < 20);
    expect(pages).toBeGreaterThan(3);
    expect(seen.map((issue) => issue.issueId)).toEqual(allIssuesOf(sandbox.data, PRIMARY_ACCOUNT, FIXED_NOW).map((issue) => issue.issueId));
    const open = await graphql(sandbox, ISSUES, { a: PRIMARY_ACCOUNT, w, filter: { states: ['CREATED', 'ACTIVATED'] } });
    expect(((open.data as any).actor.account.aiIssues.issues.issues as unknown[]).length).toBeGreaterThan(0); // eslint-disable-line @typescript-eslint/no-explicit-any -- as above
    const foreign = await graphql(sandbox, ISSUES, { a: PRIMARY_ACCOUNT, w: { startTime: 0, endTime: FIXED_NOW }, cursor: 'eyJvZmZzZXQiOjEwMCwic2VhcmNoIjoiMDAwMDAwMDAifQ' });
    expect(foreign.errors?.[0]?.message).toBe('Invalid cursor');
    // The default window is NerdGraph's last 24 hours.
    const recent = await graphql(sandbox, ISSUES, { a: PRIMARY_ACCOUNT });
    for (const issue of (recent.data as any).actor.account.aiIssues.issues.issues as Array<{ createdAt: number }>) expect(issue.createdAt).toBeGreaterThanOrEqual(FIXED_NOW - 24 * HOUR); // eslint-disable-line @typescript-eslint/no-explicit-any -- as above
  });

  it('acknowledge and close change the state, count once each, and refuse what is closed or foreign', async () => {
    const sandbox = world();
    const open = allIssuesOf(sandbox.data, PRIMARY_ACCOUNT, FIXED_NOW).filter((issue) => issue.closedAt === null);
    const [first, second] = open as [(typeof open)[0], (typeof open)[0]];
    const act = (field: string, issueId: string, accountId = PRIMARY_ACCOUNT, key = DEMO_KEY) =>
      graphql(sandbox, `mutation($a: Int!, $i: ID!) { ${field}(accountId: $a, issueId: $i) { error result { accountId action issueId } } }`, { a: accountId, i: issueId }, key);
    const ack = await act('aiIssuesAckIssue', first.issueId);
    expect(ack.data).toEqual({ aiIssuesAckIssue: { error: null, result: { accountId: PRIMARY_ACCOUNT, action: 'ACK', issueId: first.issueId } } });
    const resolved = await act('aiIssuesResolveIssue', second.issueId);
    expect((resolved.data as any).aiIssuesResolveIssue.result.action).toBe('RESOLVE'); // eslint-disable-line @typescript-eslint/no-explicit-any -- a test reads the raw answer
    const after = new Map(allIssuesOf(sandbox.data, PRIMARY_ACCOUNT, FIXED_NOW).map((issue) => [issue.issueId, issue]));
    expect(after.get(first.issueId)!.acknowledgedAt).toBe(FIXED_NOW);
    expect(after.get(first.issueId)!.closedAt).toBeNull();
    expect(after.get(second.issueId)!.closedAt).toBe(FIXED_NOW);
    for (const incident of after.get(second.issueId)!.incidents) expect(incident.closedAt).not.toBeNull();
    expect(sandbox.writes().nerdgraph).toEqual({ aiIssuesAckIssue: 1, aiIssuesResolveIssue: 1 });
    // Closed, unknown, foreign: GraphQL errors, nothing counted.
    expect((await act('aiIssuesResolveIssue', second.issueId)).errors?.[0]?.message).toBe('Issue is already closed');
    expect((await act('aiIssuesAckIssue', 'no-such-issue')).errors?.[0]?.extensions?.errorClass).toBe('NOT_FOUND');
    expect((await act('aiIssuesAckIssue', first.issueId, SECONDARY_ACCOUNT)).errors?.[0]?.extensions?.errorClass).toBe('FORBIDDEN');
    expect(sandbox.writes().total).toBe(2);
    // The legacy face sees the same state.
    const legacy = await sandbox.app.request(`/v2/alerts_incidents.json?only_open=true`, { headers: { 'x-api-key': DEMO_KEY } });
    const ids = ((await legacy.json()) as { incidents: Array<{ id: number }> }).incidents.map((incident) => incident.id);
    expect(ids).toContain(alertV2Id(first.issueId));
    expect(ids).not.toContain(alertV2Id(second.issueId));
  });

  it('serves the alert store as policiesSearch and nrqlConditionsSearch', async () => {
    const sandbox = world();
    const answer = await graphql(
      sandbox,
      `query($a: Int!) { actor { account(id: $a) { alerts {
        policiesSearch(searchCriteria: { ids: ["100000", "100001", "999"] }) { nextCursor totalCount policies { id name incidentPreference } }
        nrqlConditionsSearch { nextCursor totalCount nrqlConditions { id name policyId } } } } } }`,
      { a: PRIMARY_ACCOUNT },
    );
    const alerts = (answer.data as any).actor.account.alerts; // eslint-disable-line @typescript-eslint/no-explicit-any -- a test reads the raw answer
    const store = sandbox.data.alerts;
    expect(alerts.policiesSearch.policies.map((p: { id: string }) => p.id)).toEqual(['100000', '100001']);
    expect(alerts.policiesSearch.policies[0].name).toBe(store.policies.find((p) => p.id === 100000)!.name);
    const nrql = store.conditions.filter((c) => c.accountId === PRIMARY_ACCOUNT && c.family === 'alerts_nrql_conditions');
    expect(alerts.nrqlConditionsSearch.totalCount).toBe(nrql.length);
    expect(alerts.nrqlConditionsSearch.nextCursor).not.toBeNull();
  });
});
