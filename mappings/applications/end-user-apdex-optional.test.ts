import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SandboxApp } from '../../sandbox/model.ts';
import { json, startFakeUpstream, type FakeRequest } from '../../test/support/fake-upstream.ts';
import { DEMO_KEY, PRIMARY_ACCOUNT, createTestGateway, startSandbox, type TestGateway } from '../../test/support/harness.ts';

/**
 * The end-user apdex score is one NRQL part of the request that reads the application (show,
 * list page, and the reads of the update and delete). NerdGraph can fail that part alone (an
 * NRQL timeout or rate limit: partial data, an error on the nrql field): the application is then
 * still answered, with end_user_summary.apdex_score null, the request log says it was degraded,
 * and nothing is cached as if whole. A write still writes exactly once.
 */
const HEADERS = { 'X-Api-Key': DEMO_KEY };
const READS = new Set(['ApplicationByGuid', 'ApplicationsPageDetails', 'ApplicationsBrowserApdex']);

type Failure = 'none' | 'timeout' | 'rate-limit';
const NRQL_ERRORS: Record<Exclude<Failure, 'none'>, { message: string; extensions: Record<string, string> }> = {
  timeout: { message: 'NRDB query duration exceeded the set timeout', extensions: { errorClass: 'TIMEOUT' } },
  'rate-limit': { message: 'Too many requests: NRQL query rate limit exceeded', extensions: { errorClass: 'TOO_MANY_REQUESTS' } },
};

let sandbox: Awaited<ReturnType<typeof startSandbox>>;
let upstream: Awaited<ReturnType<typeof startFakeUpstream>>;
let failure: Failure = 'none';

/** The sandbox's answer, with the end-user apdex NRQL field failed as NerdGraph fails one field: null, and an error at its path. */
async function answer(request: FakeRequest): Promise<{ status: number; body: { data?: { actor?: { account?: Record<string, unknown> | null } }; errors?: unknown[] } }> {
  const response = await fetch(sandbox.graphqlUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'api-key': String(request.headers['api-key'] ?? '') },
    body: JSON.stringify({ query: request.query, variables: request.variables }),
  });
  const body = (await response.json()) as { data?: { actor?: { account?: Record<string, unknown> | null } }; errors?: unknown[] };
  const account = body.data?.actor?.account;
  if (failure !== 'none' && READS.has(request.operationName ?? '') && account) {
    account.endUser = null;
    body.errors = [...(body.errors ?? []), { ...NRQL_ERRORS[failure], path: ['actor', 'account', 'endUser'] }];
  }
  return { status: response.status, body };
}

beforeAll(async () => {
  sandbox = await startSandbox({ apmApps: 60 });
  upstream = await startFakeUpstream(async (request, res) => {
    const { status, body } = await answer(request);
    json(res, status, body);
  });
});
afterAll(async () => {
  await upstream.close();
  await sandbox.close();
});

const primaryApps = (): SandboxApp[] => sandbox.sandbox.data.apps.filter((app) => app.accountId === PRIMARY_ACCOUNT);
/** A reporting app with browser traffic: its end_user_summary has an apdex score when nothing fails. */
const browserApp = (): SandboxApp => primaryApps().find((app) => app.reporting && app.browser !== null)!;
const sent = (operation: string): number => upstream.received.filter((request) => request.operationName === operation).length;

interface App {
  id: number;
  name: string;
  settings: Record<string, unknown>;
  end_user_summary?: { apdex_score: number | null };
}

/** `body` as the whole answer would be with every end_user_summary.apdex_score null. */
function withoutApdex<T>(body: T): T {
  return JSON.parse(JSON.stringify(body), (key, value: unknown) => (key === 'end_user_summary' && value !== null && typeof value === 'object' ? { ...value, apdex_score: null } : value)) as T;
}

function degradedLines(gateway: TestGateway): Array<{ degraded: string; level: number; route: string }> {
  return gateway.logs.map((text) => JSON.parse(text) as { degraded?: string; level: number; route: string }).flatMap((entry) => (entry.degraded === undefined ? [] : [entry as { degraded: string; level: number; route: string }]));
}

async function get(gateway: TestGateway, path: string): Promise<{ status: number; body: unknown }> {
  const response = await gateway.app.request(path, { headers: HEADERS });
  return { status: response.status, body: await response.json() };
}

describe('a failed end-user apdex NRQL part', () => {
  it.each(['timeout', 'rate-limit'] as const)('(%s) leaves the show whole but its apdex score, and the log says degraded', async (kind) => {
    const app = browserApp();
    failure = 'none';
    const whole = await get(await createTestGateway({ nerdgraphUrl: upstream.url }), `/v2/applications/${app.id}.json`);
    expect(whole.status).toBe(200);
    expect((whole.body as { application: App }).application.end_user_summary?.apdex_score).toEqual(expect.any(Number));

    failure = kind;
    const gateway = await createTestGateway({ nerdgraphUrl: upstream.url });
    const degraded = await get(gateway, `/v2/applications/${app.id}.json`);
    expect(degraded.status).toBe(200);
    expect(degraded.body).toEqual(withoutApdex(whole.body));
    const lines = degradedLines(gateway);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ route: '/v2/applications/{id}.{format}', level: 40 });
    expect(lines[0]!.degraded).toMatch(new RegExp(`^ApplicationByGuid actor\\.account\\.endUser failed \\(${kind === 'timeout' ? 'timeout' : 'rate_limited'}\\): end_user_summary\\.apdex_score is null$`));
    // The key never reaches the log line.
    expect(gateway.logs.join('\n')).not.toContain(DEMO_KEY);
  });

  it.each(['', '?exclude_links=true'])('leaves every list item whole but its apdex score (%s)', async (query) => {
    failure = 'none';
    const whole = await get(await createTestGateway({ nerdgraphUrl: upstream.url }), `/v2/applications.json${query}`);
    expect(whole.status).toBe(200);
    expect((whole.body as { applications: App[] }).applications.some((item) => typeof item.end_user_summary?.apdex_score === 'number')).toBe(true);

    failure = 'timeout';
    const gateway = await createTestGateway({ nerdgraphUrl: upstream.url });
    const degraded = await get(gateway, `/v2/applications.json${query}`);
    expect(degraded.status).toBe(200);
    expect(degraded.body).toEqual(withoutApdex(whole.body));
    expect(degradedLines(gateway).map((line) => line.degraded)).toEqual([expect.stringMatching(/actor\.account\.endUser failed \(timeout\): end_user_summary\.apdex_score is null$/)]);
  });

  it('is not cached as whole: the next request within the micro-cache window reads it again', async () => {
    const app = browserApp();
    const gateway = await createTestGateway({ nerdgraphUrl: upstream.url, microCacheMs: 30_000 });
    failure = 'timeout';
    const show = `/v2/applications/${app.id}.json`;
    const list = '/v2/applications.json';
    expect(((await get(gateway, show)).body as { application: App }).application.end_user_summary?.apdex_score).toBeNull();
    expect(((await get(gateway, list)).body as { applications: App[] }).applications.every((item) => item.end_user_summary === undefined || item.end_user_summary.apdex_score === null)).toBe(true);
    const [byGuid, details, searches] = [sent('ApplicationByGuid'), sent('ApplicationsPageDetails'), sent('ApplicationsSearch')];

    failure = 'none';
    const score = ((await get(gateway, show)).body as { application: App }).application.end_user_summary?.apdex_score;
    expect(score).toEqual(expect.any(Number));
    const listed = ((await get(gateway, list)).body as { applications: App[] }).applications;
    expect(listed.find((item) => item.id === app.id)?.end_user_summary?.apdex_score).toEqual(expect.any(Number));
    // Read again, not served from the micro-cache, the page's shared enrichment or its rendering...
    expect(sent('ApplicationByGuid')).toBe(byGuid + 1);
    expect(sent('ApplicationsPageDetails')).toBe(details + 1);
    // ...while the whole search page was (the micro-cache still works).
    expect(sent('ApplicationsSearch')).toBe(searches);
    // Whole now: kept (the show's score for a minute, the list page in the micro-cache), so no NRQL is asked again.
    expect(((await get(gateway, show)).body as { application: App }).application.end_user_summary?.apdex_score).toBe(score);
    expect(upstream.received.filter((request) => request.operationName === 'ApplicationByGuid').at(-1)?.variables.withEndUserApdex).toBe(false);
    await get(gateway, list);
    expect(sent('ApplicationsPageDetails')).toBe(details + 1);
  });

  it('marks every request that shares one degraded page read as degraded', async () => {
    const gateway = await createTestGateway({ nerdgraphUrl: upstream.url, microCacheMs: 30_000 });
    failure = 'rate-limit';
    const details = sent('ApplicationsPageDetails');
    const answers = await Promise.all([get(gateway, '/v2/applications.json'), get(gateway, '/v2/applications.json'), get(gateway, '/v2/applications.json')]);
    expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200]);
    // One page read for the three (coalesced), and each of the three logged as degraded.
    expect(sent('ApplicationsPageDetails')).toBe(details + 1);
    expect(degradedLines(gateway).map((line) => line.degraded)).toEqual(Array(3).fill(expect.stringMatching(/failed \((rate_limited|no result)\)/)));
  });

  it('lets an update write exactly once and answer it, apdex score null', async () => {
    failure = 'timeout';
    const app = browserApp();
    const renamed = `${app.name} renamed`;
    const gateway = await createTestGateway({ nerdgraphUrl: upstream.url });
    const before = sandbox.sandbox.writes().nerdgraph.agentApplicationSettingsUpdate ?? 0;
    const response = await gateway.app.request(`/v2/applications/${app.id}.json`, {
      method: 'PUT',
      headers: { ...HEADERS, 'Content-Type': 'application/json' },
      body: JSON.stringify({ application: { name: renamed, settings: { app_apdex_threshold: 0.7 } } }),
    });
    expect(response.status).toBe(200);
    const updated = ((await response.json()) as { application: App & { settings: { app_apdex_threshold: number } } }).application;
    expect(updated).toMatchObject({ id: app.id, name: renamed, settings: { app_apdex_threshold: 0.7 } });
    expect(updated.end_user_summary?.apdex_score).toBeNull();
    expect((sandbox.sandbox.writes().nerdgraph.agentApplicationSettingsUpdate ?? 0) - before).toBe(1);
    expect(degradedLines(gateway)).toHaveLength(1);
  });

  it('lets a delete of a non-reporting app delete exactly once', async () => {
    failure = 'rate-limit';
    const app = primaryApps().find((candidate) => !candidate.reporting)!;
    const gateway = await createTestGateway({ nerdgraphUrl: upstream.url });
    const before = sandbox.sandbox.writes().nerdgraph.agentApplicationDelete ?? 0;
    const response = await gateway.app.request(`/v2/applications/${app.id}.json`, { method: 'DELETE', headers: HEADERS });
    expect(response.status).toBe(200);
    expect(((await response.json()) as { application: App }).application.id).toBe(app.id);
    expect((sandbox.sandbox.writes().nerdgraph.agentApplicationDelete ?? 0) - before).toBe(1);
    expect(sent('ApplicationDelete')).toBe(1);
  });
});
