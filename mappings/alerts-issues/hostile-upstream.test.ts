import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { listenOnLoopback } from '../../test/support/http.ts';
import { DEMO_KEY, FIXED_NOW, PRIMARY_ACCOUNT, createTestGateway, startSandbox, type TestGateway } from '../../test/support/harness.ts';
import { alertV2Id } from './alert-id.ts';

/**
 * alerts_violations, alerts_incidents (list, acknowledge, close) and alerts_events against a
 * deliberately hostile NerdGraph: small pages (10 items), lists longer than the 50-page walk
 * bound (acknowledge and close) or than 3 requests of time slices reach (the three lists: the
 * stub honours each slice's timeWindow), a cursor repeated (the slices' or the NRQL conditions'),
 * deployment rows without appId, confirmations naming another account or action. The
 * sandbox's generous pages hide all of these. Alert operations are answered by the stub below;
 * everything else (the key's accounts) is relayed to a sandbox.
 */
const DAY = 86_400_000;
const PAGE = 10;

interface Scenario {
  /** Items in each aiIssues list. */
  total: number;
  /** The second page's cursor repeats the first's. */
  repeatCursor: boolean;
  /** Every item created in the same millisecond (no narrower window can split them). */
  sameTime: boolean;
  /** Issue states and closedAt by index (default ACTIVATED, open). */
  issueState: (index: number) => { state: string; closedAt: number | null };
  /** The deployment rows of AlertEventDeployments. */
  deploymentRows: Array<Record<string, unknown>>;
  /** Pages of NRQL conditions: condition 5 is named on the last one (`C`); earlier pages name others. */
  conditionPages: number;
  /** The second page of conditions gives the first page's cursor again. */
  repeatConditionCursor: boolean;
  /** Pages list their window oldest first (the slicing assumes newest first: SLICE_ASSUMPTIONS). */
  oldestFirst: boolean;
  /** What the acknowledge/close mutation answers (result fields). */
  actionResult: (issueId: string, action: string) => Record<string, unknown>;
}

const defaults = (): Scenario => ({
  total: 0,
  repeatCursor: false,
  sameTime: false,
  issueState: () => ({ state: 'ACTIVATED', closedAt: null }),
  deploymentRows: [],
  conditionPages: 1,
  repeatConditionCursor: false,
  oldestFirst: false,
  actionResult: (issueId, action) => ({ accountId: PRIMARY_ACCOUNT, action, issueId }),
});

let scenario: Scenario = defaults();
/** The variables of every alert operation the stub answered, in order. */
let seen: Array<{ operation: string; variables: Record<string, unknown> }> = [];
let sandbox: Awaited<ReturnType<typeof startSandbox>>;
let gateway: TestGateway;
let closeStub: () => Promise<void>;

const guid = (account: number, domain: string, type: string, id: number | string): string => Buffer.from(`${account}|${domain}|${type}|${id}`).toString('base64url');

const MINUTE = 60_000;
/** Item i (incident inc-i, issue iss-i) opens i+1 minutes before now, or all in one ms with sameTime. */
const createdAtOf = (i: number): number => (scenario.sameTime ? FIXED_NOW - MINUTE : FIXED_NOW - (i + 1) * MINUTE);

/** One cursor page of the items created in `timeWindow` (NerdGraph's window includes both ends). */
function slice(variables: { cursor?: unknown; timeWindow?: unknown }): { indices: number[]; nextCursor: string | null } {
  const window = variables.timeWindow as { startTime: number; endTime: number } | null | undefined;
  const inWindow = Array.from({ length: scenario.total }, (_, i) => i).filter((i) => !window || (createdAtOf(i) >= window.startTime && createdAtOf(i) <= window.endTime));
  if (scenario.oldestFirst) inWindow.reverse();
  const start = typeof variables.cursor === 'string' ? Number(variables.cursor.replace('c', '')) : 0;
  const end = Math.min(start + PAGE, inWindow.length);
  const next = scenario.repeatCursor && start > 0 ? `c${start}` : `c${end}`;
  return { indices: inWindow.slice(start, end), nextCursor: end < inWindow.length ? next : null };
}

const incidentOf = (i: number) => ({
  incidentId: `inc-${i}`,
  title: `violation ${i}`,
  priority: 'CRITICAL',
  state: 'CLOSED',
  createdAt: createdAtOf(i),
  closedAt: createdAtOf(i) + MINUTE,
  entityGuids: guid(PRIMARY_ACCOUNT, 'APM', 'APPLICATION', 7),
  entityNames: 'app',
  entityTypes: 'APPLICATION',
  conditionFamilyId: '5',
  policyIds: '1',
});
const issueOf = (i: number) => ({ issueId: `iss-${i}`, createdAt: createdAtOf(i), activatedAt: null, policyIds: [1], incidentIds: [`inc-${i}`], ...scenario.issueState(i) });
const POLICIES = { nextCursor: null, policies: [{ id: '1', name: 'P', incidentPreference: 'PER_POLICY' }] };

/** One page of NRQL conditions (cursor k<n>: page n); condition 5 is on the last page. */
function conditionsPage(cursor: unknown): unknown {
  const index = typeof cursor === 'string' ? Number(cursor.replace('k', '')) : 0;
  const last = index >= scenario.conditionPages - 1;
  const nextCursor = last ? null : scenario.repeatConditionCursor && index > 0 ? `k${index}` : `k${index + 1}`;
  return { nextCursor, nrqlConditions: last ? [{ id: '5', name: 'C' }] : [{ id: String(100 + index), name: `other ${index}` }] };
}

/** The sliced requests (alerts_events, alerts_incidents, alerts_violations): each slot included is one windowed cursor page. */
function slicesAnswer(variables: Record<string, unknown>): unknown {
  const aiIssues: Record<string, unknown> = {};
  for (const [name, included] of Object.entries(variables)) {
    const slot = /^([vu])(\d+)$/.exec(name);
    if (!slot || included !== true) continue;
    const [, kind, n] = slot;
    const page = slice({ cursor: variables[`${kind}c${n}`], timeWindow: variables[`${kind}w${n}`] });
    aiIssues[name] = kind === 'v' ? { nextCursor: page.nextCursor, incidents: page.indices.map(incidentOf) } : { nextCursor: page.nextCursor, issues: page.indices.map(issueOf) };
  }
  const alerts = {
    allPolicies: variables.withAllPolicies ? POLICIES : null,
    namedPolicies: variables.withNamedPolicies ? POLICIES : null,
    ...('withConditions' in variables ? { conditions: variables.withConditions ? conditionsPage(variables.conditionsCursor) : null } : {}),
  };
  return { actor: { account: { aiIssues, alerts, ...('events' in variables ? { nrql: { results: scenario.deploymentRows } } : {}) } } };
}

function answer(operation: string, variables: Record<string, unknown>): unknown {
  switch (operation) {
    case 'AlertIncidents': {
      const filter = variables.filter as { ids?: string[] } | null;
      const { indices, nextCursor } = filter?.ids ? { indices: Array.from({ length: scenario.total }, (_, i) => i), nextCursor: null } : slice(variables);
      const issues = indices.map(issueOf).filter((issue) => !filter?.ids || filter.ids.includes(issue.issueId));
      return { actor: { account: { aiIssues: { issues: { nextCursor, issues } } } } };
    }
    case 'AlertEventsFirst':
    case 'AlertSlices':
    case 'AlertViolationSlices':
      return slicesAnswer(variables);
    case 'AlertPolicies':
      return { actor: { account: { alerts: { policiesSearch: POLICIES } } } };
    case 'AlertEventDeployments':
      return { actor: { account: { nrql: { results: scenario.deploymentRows } } } };
    case 'AlertIncidentAcknowledge':
      return { aiIssuesAckIssue: { error: null, result: scenario.actionResult(String(variables.issueId), 'ACK') } };
    case 'AlertIncidentClose':
      return { aiIssuesResolveIssue: { error: null, result: scenario.actionResult(String(variables.issueId), 'RESOLVE') } };
    default:
      return undefined;
  }
}

async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  const parsed = JSON.parse(text) as { query: string; variables?: Record<string, unknown> };
  const operation = /(?:query|mutation)\s+(\w+)/.exec(parsed.query)?.[1] ?? '';
  const data = answer(operation, parsed.variables ?? {});
  if (data !== undefined) {
    seen.push({ operation, variables: parsed.variables ?? {} });
    return void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ data }));
  }
  const upstream = await fetch(sandbox.graphqlUrl, { method: 'POST', headers: { 'content-type': 'application/json', 'api-key': String(req.headers['api-key'] ?? '') }, body: text });
  res.writeHead(upstream.status, { 'content-type': 'application/json' }).end(await upstream.text());
}

beforeAll(async () => {
  sandbox = await startSandbox({ apmApps: 5 });
  const stub = await listenOnLoopback(createServer((req, res) => void handle(req, res).catch(() => req.socket.destroy())));
  closeStub = stub.close;
  gateway = await createTestGateway({ nerdgraphUrl: `${stub.origin}/graphql` });
});
afterAll(async () => {
  await closeStub();
  await sandbox.close();
});
beforeEach(() => {
  scenario = defaults();
  seen = [];
});

interface Got {
  status: number;
  body: Record<string, unknown>;
  rels: Record<string, string>;
}

async function get(path: string): Promise<Got> {
  const response = await gateway.app.request(path, { headers: { 'X-Api-Key': DEMO_KEY } });
  const rels: Record<string, string> = {};
  for (const entry of (response.headers.get('link') ?? '').split(', ').filter(Boolean)) {
    const match = /^<([^>]*)>; rel="(\w+)"$/.exec(entry);
    if (match) rels[match[2]!] = new URL(match[1]!).pathname + new URL(match[1]!).search;
  }
  return { status: response.status, body: (await response.json()) as Record<string, unknown>, rels };
}

const calls = (operation: string): number => seen.filter((call) => call.operation === operation).length;
const ids = (got: Got, key: string): number[] => ((got.body[key] as Array<{ id: number }> | undefined) ?? []).map((item) => item.id);

/** Follows rel="next" from `path`: every announced page must answer 200; returns the pages' ids. */
async function followNext(path: string, key: string): Promise<{ pages: Got[]; ids: number[] }> {
  const pages: Got[] = [];
  let next: string | undefined = path;
  while (next !== undefined && pages.length < 60) {
    const got = await get(next);
    expect(got.status, `${next}: ${JSON.stringify(got.body).slice(0, 200)}`).toBe(200);
    pages.push(got);
    next = got.rels.next;
  }
  return { pages, ids: pages.flatMap((page) => ids(page, key)) };
}

describe('alerts lists over a hostile NerdGraph (10 per page, more than 50 pages)', () => {
  it('violations: page 1 reads the whole list in at most 3 requests with its policy and condition names, later pages reuse that read', async () => {
    scenario.total = 150;
    scenario.conditionPages = 2;
    const small = await get('/v2/alerts_violations.json');
    expect(ids(small, 'violations')).toEqual(Array.from({ length: 150 }, (_, i) => alertV2Id(`inc-${i}`)));
    expect(small.rels).toEqual({});
    // Condition 5 is named on the second page of conditions, read by the second request.
    const named = small.body.violations as Array<{ policy_name: string; condition_name: string | null }>;
    expect(new Set(named.map((violation) => `${violation.policy_name}/${violation.condition_name}`))).toEqual(new Set(['P/C']));
    expect(seen.map((call) => call.operation)).toEqual(['AlertViolationSlices', 'AlertViolationSlices', 'AlertViolationSlices']);
    expect(seen.map((call) => [call.variables.withConditions, call.variables.conditionsCursor])).toEqual([
      [true, null],
      [true, 'k1'],
      [false, null],
    ]);
    seen = [];
    const beyond = await get('/v2/alerts_violations.json?page=2');
    expect(beyond.status).toBe(200);
    expect(ids(beyond, 'violations')).toEqual([]);
    expect(seen).toEqual([]);
  });

  it('violations: conditions past the pages 3 requests read have no name; a repeated conditions cursor is a 502', async () => {
    scenario.total = 5;
    scenario.conditionPages = 4;
    const unnamed = await get('/v2/alerts_violations.json');
    expect(unnamed.status).toBe(200);
    expect((unnamed.body.violations as Array<{ condition_name: string | null }>).map((violation) => violation.condition_name)).toEqual([null, null, null, null, null]);
    expect(calls('AlertViolationSlices')).toBe(3);
    scenario.repeatConditionCursor = true;
    const repeated = await get('/v2/alerts_violations.json');
    expect(repeated.status).toBe(502);
    expect((repeated.body.error as { title: string }).title).toContain('repeated cursor while listing (AlertViolationSlices)');
  });

  it('violations over pages listed oldest first (against the slicing\'s assumption): nothing in the middle goes missing, the list is only ever cut from the newest down', async () => {
    scenario.total = 600;
    scenario.oldestFirst = true;
    const { pages, ids: all } = await followNext('/v2/alerts_violations.json', 'violations');
    // Whatever was listed is the newest ones, with no gap: a page out of order is walked by its
    // cursor, and nothing of its span counts as read until its walk ends.
    expect(all).toEqual(Array.from({ length: all.length }, (_, i) => alertV2Id(`inc-${i}`)));
    expect(all.length).toBeLessThan(scenario.total);
    expect(pages.every((page) => page.rels.last === undefined)).toBe(true);
    expect(seen.length).toBeLessThanOrEqual(3);
  });

  it('violations: a list cut at its bound is whole from the newest down, every rel="next" is served, a page beyond is a 422 saying so', async () => {
    scenario.total = 600;
    const { pages, ids: all } = await followNext('/v2/alerts_violations.json', 'violations');
    expect(new Set(all).size).toBe(all.length);
    expect(all.length).toBeGreaterThanOrEqual(2 * 16 * Math.floor((PAGE * 2) / 3));
    expect(all.length).toBeLessThan(scenario.total);
    expect(all).toEqual(Array.from({ length: all.length }, (_, i) => alertV2Id(`inc-${i}`)));
    expect(pages.every((page) => page.rels.last === undefined)).toBe(true);
    expect(seen.map((call) => call.operation)).toEqual(['AlertViolationSlices', 'AlertViolationSlices', 'AlertViolationSlices']);
    const beyond = await get(`/v2/alerts_violations.json?page=${pages.length + 1}`);
    expect(beyond.status).toBe(422);
    expect((beyond.body.error as { title: string }).title).toMatch(/only the violations opened since \d{4}-\d\d-\d\dT.*narrow the list with start_date and end_date/);
  });

  it('incidents: page 1 reads the whole list in at most 3 requests, later pages reuse that read; rel="last" when the list was read whole', async () => {
    scenario.total = 150;
    const small = await get('/v2/alerts_incidents.json');
    expect(ids(small, 'incidents')).toEqual(Array.from({ length: 150 }, (_, i) => alertV2Id(`iss-${i}`)));
    expect(small.rels).toEqual({});
    expect(seen.map((call) => call.operation)).toEqual(['AlertSlices', 'AlertSlices', 'AlertSlices']);
    // A page past the end of a list read whole is empty and points back at the last.
    seen = [];
    const beyond = await get('/v2/alerts_incidents.json?page=2');
    expect(beyond.status).toBe(200);
    expect(ids(beyond, 'incidents')).toEqual([]);
    expect(seen).toEqual([]);
  });

  it('incidents: a list cut at its bound is whole from the newest down, every rel="next" is served, a page beyond is a 422', async () => {
    scenario.total = 600;
    const { pages, ids: all } = await followNext('/v2/alerts_incidents.json', 'incidents');
    expect(new Set(all).size).toBe(all.length);
    expect(all.length).toBeGreaterThanOrEqual(2 * 16 * Math.floor((PAGE * 2) / 3));
    expect(all.length).toBeLessThan(scenario.total);
    expect(all).toEqual(Array.from({ length: all.length }, (_, i) => alertV2Id(`iss-${i}`)));
    expect(pages.every((page) => page.rels.last === undefined)).toBe(true);
    expect(seen.map((call) => call.operation)).toEqual(['AlertSlices', 'AlertSlices', 'AlertSlices']);
    const beyond = await get(`/v2/alerts_incidents.json?page=${pages.length + 1}`);
    expect(beyond.status).toBe(422);
    expect((beyond.body.error as { title: string }).title).toMatch(/only the incidents opened since \d{4}-\d\d-\d\dT.*narrow the list with only_open/);
  });

  it('events: a list cut at its bound (3 requests) is whole from the newest down, has no rel="last", every rel="next" is served, a page beyond is a 422', async () => {
    scenario.total = 600;
    const { pages, ids: all } = await followNext('/v2/alerts_events.json', 'recent_events');
    expect(new Set(all).size).toBe(all.length);
    // The whole walk: page 1's read (at most 3 requests), the later pages from what it kept.
    expect(seen.map((call) => call.operation)).toEqual(['AlertEventsFirst', 'AlertSlices', 'AlertSlices']);
    // Opens and closes of the newest incidents reached, none older than the oldest one reached.
    const reached = all.length / 2;
    // At least two requests of 16 slices of two-thirds of a page each (the first request learns how dense the list is).
    expect(reached).toBeGreaterThanOrEqual(2 * 16 * Math.floor((PAGE * 2) / 3));
    expect(reached).toBeLessThan(scenario.total);
    const newest = Array.from({ length: reached }, (_, i) => [alertV2Id(`inc-${i}|open`), alertV2Id(`inc-${i}|close`)]).flat();
    expect(new Set(all)).toEqual(new Set(newest));
    expect(pages.every((page) => page.rels.last === undefined)).toBe(true);
    const beyond = await get(`/v2/alerts_events.json?page=${pages.length + 1}`);
    expect(beyond.status).toBe(422);
    expect((beyond.body.error as { title: string }).title).toMatch(/only the events since \d{4}-\d\d-\d\dT/);
  });

  it('a short list still ends with an exact rel="last" on every route that sent one', async () => {
    // Within what alerts_events' 3 requests reach at 10 per page.
    scenario.total = 150;
    const events = await get('/v2/alerts_events.json');
    expect(events.rels).toEqual({ next: '/v2/alerts_events.json?page=2', last: '/v2/alerts_events.json?page=2' });
    scenario.total = 300;
    const violations = await get('/v2/alerts_violations.json?page=2');
    expect(Object.keys(violations.rels)).toEqual(['first', 'prev']);
  });

  it.each([
    // The sliced lists follow a cursor only where no narrower window can split a page: items created in one ms.
    ['/v2/alerts_violations.json', 'AlertViolationSlices', true],
    ['/v2/alerts_incidents.json', 'AlertSlices', true],
    ['/v2/alerts_events.json', 'AlertSlices', true],
  ])('%s: a repeated cursor is a 502 with a clear title, never duplicated rows', async (path, operation, sameTime) => {
    scenario.total = 600;
    scenario.repeatCursor = true;
    scenario.sameTime = sameTime;
    const got = await get(path);
    expect(got.status).toBe(502);
    expect((got.body.error as { title: string }).title).toContain(`repeated cursor while listing (${operation})`);
    expect(calls(operation)).toBeLessThanOrEqual(3);
  });
});

describe('alerts_events deployments over a hostile NerdGraph', () => {
  it('takes change-tracking rows by entity.guid (no appId): APM applications of the caller\'s account only', async () => {
    scenario.deploymentRows = [
      { timestamp: FIXED_NOW - 1000, deploymentId: 'dep-1', version: 'v1', appId: 11, 'entity.guid': guid(PRIMARY_ACCOUNT, 'APM', 'APPLICATION', 11) },
      { timestamp: FIXED_NOW - 2000, changeTrackingId: 'ct-1', version: 'v2', appId: null, 'entity.guid': guid(PRIMARY_ACCOUNT, 'APM', 'APPLICATION', 12) },
      { timestamp: FIXED_NOW - 3000, changeTrackingId: 'ct-2', version: 'v3', appId: null, 'entity.guid': guid(999, 'APM', 'APPLICATION', 13) },
      { timestamp: FIXED_NOW - 4000, changeTrackingId: 'ct-3', version: 'v4', appId: null, 'entity.guid': guid(PRIMARY_ACCOUNT, 'BROWSER', 'APPLICATION', 14) },
      { timestamp: FIXED_NOW - 5000, changeTrackingId: 'ct-4', version: 'v5', appId: null, 'entity.guid': 'not a guid' },
      { timestamp: FIXED_NOW - 6000, changeTrackingId: 'ct-5', version: 'v6', appId: null, 'entity.guid': guid(PRIMARY_ACCOUNT, 'APM', 'APPLICATION', 'abc') },
    ];
    const got = await get('/v2/alerts_events.json?filter[event_type]=DEPLOYMENT');
    expect(got.status).toBe(200);
    const events = got.body.recent_events as Array<{ entity_id: number; description: string }>;
    expect(events.map((event) => [event.entity_id, event.description])).toEqual([
      [11, 'Deployment of revision v1'],
      [12, 'Deployment of revision v2'],
    ]);
  });
});

describe('acknowledge and close over a hostile NerdGraph', () => {
  it('the scan stops at the page holding the id, over 90 days ending a minute after now', async () => {
    scenario.total = 600;
    const id = alertV2Id('iss-25');
    const response = await gateway.app.request(`/v2/alerts_incidents/${id}/acknowledge.json`, { method: 'PUT', headers: { 'X-Api-Key': DEMO_KEY } });
    expect(response.status).toBe(200);
    const scans = seen.filter((call) => call.operation === 'AlertIncidents' && !(call.variables.filter as { ids?: unknown } | null)?.ids);
    expect(scans).toHaveLength(3);
    expect(scans[0]!.variables.timeWindow).toEqual({ startTime: FIXED_NOW - 90 * DAY, endTime: FIXED_NOW + 60_000 });
  });

  it.each([
    ['another account', (issueId: string, action: string) => ({ accountId: PRIMARY_ACCOUNT + 1, action, issueId })],
    ['another action', (issueId: string) => ({ accountId: PRIMARY_ACCOUNT, action: 'UNACK', issueId })],
    ['another issue', (_: string, action: string) => ({ accountId: PRIMARY_ACCOUNT, action, issueId: 'iss-other' })],
  ])('a confirmation naming %s is not a confirmation: outcome unknown, sent once', async (_, result) => {
    scenario.total = 20;
    scenario.actionResult = result;
    for (const [action, operation, verb] of [
      ['acknowledge', 'AlertIncidentAcknowledge', 'acknowledged'],
      ['close', 'AlertIncidentClose', 'closed'],
    ] as const) {
      const response = await gateway.app.request(`/v2/alerts_incidents/${alertV2Id('iss-3')}/${action}.json`, { method: 'PUT', headers: { 'X-Api-Key': DEMO_KEY } });
      expect(response.status).toBe(502);
      expect(((await response.json()) as { error: { title: string } }).error.title).toContain(`may have been ${verb}`);
      expect(calls(operation)).toBe(1);
    }
  });
});

describe('alerts windows over a hostile NerdGraph', () => {
  /** The window a sliced document's first request covers: from its first slice's start to its last one's end. */
  const slicedWindowOf = (operation: string, kind: 'v' | 'u'): unknown => {
    const variables = seen.find((call) => call.operation === operation)?.variables ?? {};
    const windows = Object.entries(variables)
      .filter(([name, value]) => new RegExp(`^${kind}w\\d+$`).test(name) && value !== null)
      .map(([, value]) => value as { startTime: number; endTime: number });
    return { startTime: Math.min(...windows.map((w) => w.startTime)), endTime: Math.max(...windows.map((w) => w.endTime)) };
  };

  it('a start after now lists nothing and reads nothing; a start before 1970 counts from 1970', async () => {
    scenario.total = 30;
    const future = await get('/v2/alerts_violations.json?start_date=2099-01-01');
    expect(future).toMatchObject({ status: 200, body: { violations: [] } });
    expect(seen).toEqual([]);
    const ancient = await get('/v2/alerts_violations.json?start_date=0001-01-01');
    expect(ancient.status).toBe(200);
    expect(slicedWindowOf('AlertViolationSlices', 'v')).toEqual({ startTime: 0, endTime: FIXED_NOW + 60_000 });
  });

  it('only_open reaches 90 days back; an open DEACTIVATED issue is listed, a closed one never', async () => {
    scenario.total = 6;
    scenario.issueState = (i) => [{ state: 'CREATED', closedAt: null }, { state: 'ACTIVATED', closedAt: null }, { state: 'DEACTIVATED', closedAt: null }, { state: 'DEACTIVATED', closedAt: FIXED_NOW - 1 }, { state: 'CLOSED', closedAt: FIXED_NOW - 1 }, { state: 'ACTIVATED', closedAt: null }][i]!;
    const open = await get('/v2/alerts_incidents.json?only_open=true');
    expect(ids(open, 'incidents')).toEqual([0, 1, 2, 5].map((i) => alertV2Id(`iss-${i}`)));
    expect(slicedWindowOf('AlertSlices', 'u')).toEqual({ startTime: FIXED_NOW - 90 * DAY, endTime: FIXED_NOW + 60_000 });
    expect((seen.find((call) => call.operation === 'AlertSlices')!.variables.issueFilter as { states: string[] }).states).toEqual(['CREATED', 'ACTIVATED', 'DEACTIVATED']);
    seen = [];
    await get('/v2/alerts_violations.json?only_open=true');
    expect(slicedWindowOf('AlertViolationSlices', 'v')).toEqual({ startTime: FIXED_NOW - 90 * DAY, endTime: FIXED_NOW + 60_000 });
    expect(seen.find((call) => call.operation === 'AlertViolationSlices')!.variables.incidentFilter).toEqual({ states: ['CREATED'] });
    seen = [];
    await get('/v2/alerts_violations.json');
    expect(seen.find((call) => call.operation === 'AlertViolationSlices')!.variables.incidentFilter).toBeNull();
    seen = [];
    await get('/v2/alerts_incidents.json');
    expect(slicedWindowOf('AlertSlices', 'u')).toEqual({ startTime: FIXED_NOW - 30 * DAY, endTime: FIXED_NOW + 60_000 });
    expect(seen.find((call) => call.operation === 'AlertSlices')!.variables.issueFilter).toBeNull();
  });
});
