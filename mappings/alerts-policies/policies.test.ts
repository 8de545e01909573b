import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { buildGateway } from '../../src/gateway.ts';
import { loadConfig } from '../../src/ops/config.ts';
import { createLogger } from '../../src/ops/logger.ts';
import { MAX_POLICY_PAGES, PolicyTitles } from './alert-policies.ts';
import { json, startFakeUpstream, forwardTo, type FakeRequest } from '../../test/support/fake-upstream.ts';
import { DEMO_KEY, PRIMARY_ACCOUNT, SECONDARY_ACCOUNT, createTestGateway, startSandbox, type TestGateway } from '../../test/support/harness.ts';
import { createModesGateway, startLegacyServer } from '../../test/support/modes.ts';

/**
 * alerts_policies in translate mode: a ROUTE_MODES rule names them, the legacy API is
 * unreachable, and a client lists (filter[name], pages), shows, creates, updates and deletes
 * policies over NerdGraph alone, in v2 shapes (JSON and XML). Bad input is a v2 4xx with no
 * mutation sent; a mutation is sent once, never retried, and an unconfirmed one says so. Without
 * a rule naming them, the routes stay passthrough (ALERTS_KEPT_ALIVE), even under `*=translate`.
 */
const NOWHERE = 'http://127.0.0.1:9';
const headers = { 'x-api-key': DEMO_KEY, 'content-type': 'application/json' };

let sandbox: Awaited<ReturnType<typeof startSandbox>>;
beforeAll(async () => {
  sandbox = await startSandbox({ apmApps: 20 });
});
afterAll(async () => {
  await sandbox.close();
});

type Answer = { status: number; headers: Headers; text: string; body: Record<string, unknown> & { error?: { title: string } } };
async function call(app: { request: (path: string, init: RequestInit) => Response | Promise<Response> }, method: string, path: string, body?: unknown, extra: Record<string, string> = {}): Promise<Answer> {
  const response = await app.request(path, { method, headers: { ...headers, ...extra }, ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }) });
  const text = await response.text();
  const parsed = response.headers.get('content-type')?.includes('json') && text !== '' ? (JSON.parse(text) as Answer['body']) : {};
  return { status: response.status, headers: response.headers, text, body: parsed };
}

describe('alerts_policies translated by a ROUTE_MODES rule, with no legacy API', () => {
  let gateway: Awaited<ReturnType<typeof createModesGateway>>;
  beforeAll(async () => {
    gateway = await createModesGateway({ routes: 'real', nerdgraphUrl: sandbox.graphqlUrl, legacyUrl: NOWHERE, routeModes: '/v2/alerts_policies*=translate' });
  });
  const send = (method: string, path: string, body?: unknown, extra?: Record<string, string>) => call(gateway.app, method, path, body, extra);

  it('creates, finds by filter[name], shows, updates and deletes a policy, each mutation applied once', async () => {
    const before = sandbox.sandbox.writes().nerdgraph;
    const created = await send('POST', '/v2/alerts_policies.json', { policy: { name: '  Translated policy  ', incident_preference: 'PER_CONDITION' } });
    expect(created.status).toBe(201);
    const policy = created.body.policy as { id: number };
    expect(created.body).toEqual({ policy: { id: expect.any(Number), incident_preference: 'PER_CONDITION', name: 'Translated policy', created_at: null, updated_at: null } });
    expect(Object.keys(created.body.policy as object)).toEqual(['id', 'incident_preference', 'name', 'created_at', 'updated_at']);

    const found = await send('GET', `/v2/alerts_policies.json?filter[name]=${encodeURIComponent('Translated policy')}`);
    expect(found.status).toBe(200);
    expect(found.body).toEqual({ policies: [created.body.policy] });
    // Exact match only: a prefix or another case finds nothing.
    expect((await send('GET', '/v2/alerts_policies.json?filter[name]=Translated')).body).toEqual({ policies: [] });
    expect((await send('GET', '/v2/alerts_policies.json?filter[name]=translated%20policy')).body).toEqual({ policies: [] });

    expect((await send('GET', `/v2/alerts_policies/${policy.id}.json`)).body).toEqual(created.body);
    const updated = await send('PUT', `/v2/alerts_policies/${policy.id}.json`, { policy: { name: 'Renamed policy' } });
    expect(updated.status).toBe(200);
    expect(updated.body).toEqual({ policy: { ...(created.body.policy as object), name: 'Renamed policy' } });
    const xml = await send('GET', `/v2/alerts_policies/${policy.id}.xml`);
    expect(xml.status).toBe(200);
    expect(xml.text).toContain(`<policy><id type="integer">${policy.id}</id><incident_preference>PER_CONDITION</incident_preference><name>Renamed policy</name>`);

    const deleted = await send('DELETE', `/v2/alerts_policies/${policy.id}.json`);
    expect(deleted).toMatchObject({ status: 200, body: updated.body });
    expect(await send('GET', `/v2/alerts_policies/${policy.id}.json`)).toMatchObject({ status: 404, body: { error: { title: PolicyTitles.notFound } } });

    const after = sandbox.sandbox.writes().nerdgraph;
    for (const field of ['alertsPolicyCreate', 'alertsPolicyUpdate', 'alertsPolicyDelete']) expect((after[field] ?? 0) - (before[field] ?? 0), field).toBe(1);
  });

  it('creates from an XML body and answers in XML', async () => {
    const created = await send('POST', '/v2/alerts_policies.xml', '<policy><name>From XML</name><incident_preference>PER_CONDITION_AND_TARGET</incident_preference></policy>', { 'content-type': 'application/xml' });
    expect(created.status).toBe(201);
    expect(created.text).toMatch(/<response><policy><id type="integer">\d+<\/id><incident_preference>PER_CONDITION_AND_TARGET<\/incident_preference><name>From XML<\/name><created_at nil="true"\/><updated_at nil="true"\/><\/policy><\/response>/);
  });

  it('pages by 50 ordered by id, with v2 Link headers', async () => {
    const count = sandbox.sandbox.data.alerts.policies.filter((p) => p.accountId === PRIMARY_ACCOUNT).length;
    const last = Math.ceil(count / 50);
    const first = await send('GET', '/v2/alerts_policies.json');
    const ids = (first.body.policies as Array<{ id: number }>).map((p) => p.id);
    expect(ids).toHaveLength(50);
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
    expect(first.headers.get('link')).toContain(`page=${last}>; rel="last"`);
    const end = await send('GET', `/v2/alerts_policies.json?page=${last}`);
    expect((end.body.policies as unknown[]).length).toBe(count - (last - 1) * 50);
    expect((await send('GET', `/v2/alerts_policies.json?page=${last + 1}`)).body).toEqual({ policies: [] });
  });

  it('answers bad input with v2 4xx and sends no mutation', async () => {
    const before = sandbox.sandbox.writes().total;
    const own = sandbox.sandbox.data.alerts.policies.find((p) => p.accountId === PRIMARY_ACCOUNT)?.id as number;
    const foreign = sandbox.sandbox.data.alerts.policies.find((p) => p.accountId === SECONDARY_ACCOUNT)?.id as number;
    const cases: Array<[string, string, unknown, number, string]> = [
      ['POST', '/v2/alerts_policies.json', { policy: { name: '   ' } }, 422, "Invalid policy: name can't be blank"],
      ['POST', '/v2/alerts_policies.json', { policy: { name: 'n'.repeat(256) } }, 422, 'Invalid policy: name is too long (maximum is 255 characters)'],
      ['POST', '/v2/alerts_policies.json', { policy: { name: 'x', incident_preference: 'per_policy' } }, 422, 'Invalid policy: incident_preference must be one of PER_POLICY, PER_CONDITION, PER_CONDITION_AND_TARGET'],
      ['POST', '/v2/alerts_policies.json', { name: 'x' }, 400, PolicyTitles.missing],
      ['POST', '/v2/alerts_policies.json', undefined, 400, PolicyTitles.missing],
      ['PUT', `/v2/alerts_policies/${own}.json`, { policy: { incident_preference: null } }, 422, 'Invalid policy: incident_preference must be one of PER_POLICY, PER_CONDITION, PER_CONDITION_AND_TARGET'],
      ['PUT', `/v2/alerts_policies/${own}.json`, undefined, 400, PolicyTitles.missing],
      ['PUT', '/v2/alerts_policies/abc.json', { policy: { name: 'x' } }, 404, PolicyTitles.notFound],
      ['DELETE', '/v2/alerts_policies/0.json', undefined, 404, PolicyTitles.notFound],
      ['GET', '/v2/alerts_policies/12x.json', undefined, 404, PolicyTitles.notFound],
      ['DELETE', `/v2/alerts_policies/${foreign}.json`, undefined, 404, PolicyTitles.notFound],
      ['GET', `/v2/alerts_policies/${foreign}.json`, undefined, 404, PolicyTitles.notFound],
      ['GET', '/v2/alerts_policies.json?page=0', undefined, 422, 'Invalid parameter page: expected a whole number from 1 to 1000000'],
    ];
    for (const [method, path, body, status, title] of cases) {
      expect(await send(method, path, body), `${method} ${path} ${JSON.stringify(body)}`).toMatchObject({ status, body: { error: { title } } });
    }
    expect(sandbox.sandbox.writes().total).toBe(before);
  });
});

describe('alerts_policies without a rule naming them', () => {
  it('are passed through, even under the catch-all *=translate', async () => {
    const legacy = await startLegacyServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"from":"legacy"}');
    });
    try {
      for (const routeModes of ['', '*=translate']) {
        const gateway = await createModesGateway({ routes: 'real', nerdgraphUrl: sandbox.graphqlUrl, legacyUrl: legacy.origin, routeModes });
        legacy.received.length = 0;
        const calls: Array<[string, string, unknown?]> = [
          ['GET', '/v2/alerts_policies.json?filter[name]=x'],
          ['POST', '/v2/alerts_policies.json', { policy: { name: 'x' } }],
          ['GET', '/v2/alerts_policies/100000.json'],
          ['PUT', '/v2/alerts_policies/100000.json', { policy: { name: 'y' } }],
          ['DELETE', '/v2/alerts_policies/100000.json'],
        ];
        for (const [method, path, body] of calls) expect((await call(gateway.app, method, path, body)).body, `${routeModes} ${method} ${path}`).toEqual({ from: 'legacy' });
        expect(legacy.received.map((r) => `${r.method} ${r.url}`)).toEqual(calls.map(([method, path]) => `${method} ${path}`));
      }
    } finally {
      await legacy.close();
    }
  });
});

describe('alerts_policies writes against a failing NerdGraph', () => {
  let upstream: Awaited<ReturnType<typeof startFakeUpstream>>;
  let gateway: TestGateway;
  let override: ((request: FakeRequest) => unknown) | undefined;
  beforeAll(async () => {
    upstream = await startFakeUpstream(async (request, res) => {
      const canned = override?.(request);
      if (canned === 'fail') return json(res, 503, { errors: [{ message: 'unavailable' }] });
      if (canned !== undefined) return json(res, 200, canned);
      await forwardTo(sandbox.graphqlUrl, request, res);
    });
    // Reads are retried twice; a mutation never is.
    gateway = await createTestGateway({ nerdgraphUrl: upstream.url, retries: 2 });
  });
  afterAll(async () => {
    await upstream.close();
  });
  beforeEach(() => {
    override = undefined;
    upstream.received.length = 0;
  });
  const sent = (operation: string) => upstream.received.filter((r) => r.operationName === operation).length;

  it('sends a failed create once and answers the unconfirmed title, never "nothing was changed"', async () => {
    override = (request) => (request.operationName === 'AlertPolicyCreate' ? 'fail' : undefined);
    const answer = await call(gateway.app, 'POST', '/v2/alerts_policies.json', { policy: { name: 'Maybe made' } });
    expect(answer.status).toBe(503);
    expect(answer.body.error?.title).toMatch(/may have been created/);
    expect(sent('AlertPolicyCreate')).toBe(1);
  });

  it('answers the unconfirmed title when NerdGraph confirms no policy, and a delete that confirms another id', async () => {
    override = (request) => (request.operationName === 'AlertPolicyCreate' ? { data: { alertsPolicyCreate: null } } : undefined);
    expect((await call(gateway.app, 'POST', '/v2/alerts_policies.json', { policy: { name: 'Unconfirmed' } })).status).toBe(502);
    const own = sandbox.sandbox.data.alerts.policies.find((p) => p.accountId === PRIMARY_ACCOUNT)?.id as number;
    override = (request) => (request.operationName === 'AlertPolicyDelete' ? { data: { alertsPolicyDelete: { id: '1' } } } : undefined);
    const deleted = await call(gateway.app, 'DELETE', `/v2/alerts_policies/${own}.json`);
    expect(deleted.status).toBe(502);
    expect(deleted.body.error?.title).toMatch(/may have been deleted/);
  });

  it('sends nothing for an update that names no attribute, and answers the policy as it is', async () => {
    const own = sandbox.sandbox.data.alerts.policies.find((p) => p.accountId === PRIMARY_ACCOUNT);
    const answer = await call(gateway.app, 'PUT', `/v2/alerts_policies/${own?.id}.json`, { policy: {} });
    expect(answer).toMatchObject({ status: 200, body: { policy: { id: own?.id, name: own?.name, incident_preference: own?.incidentPreference } } });
    expect(sent('AlertPolicyUpdate')).toBe(0);
  });

  it('lists from every cursor page, by id, only the caller\'s policies of exactly the name asked for', async () => {
    const policy = (id: number, name: string, accountId = PRIMARY_ACCOUNT) => ({ id: String(id), name, incidentPreference: 'PER_POLICY', accountId });
    const page = (policies: unknown[], nextCursor: string | null) => ({ data: { actor: { account: { alerts: { policiesSearch: { nextCursor, totalCount: 4, policies } } } } } });
    override = (request) => {
      if (request.operationName !== 'AlertPoliciesSearch') return undefined;
      // NerdGraph's order and its name criterion are not relied on: a looser match and another account's policy are dropped.
      return request.variables.cursor === null
        ? page([policy(30, 'Billing'), policy(10, 'Billing'), policy(15, 'billing')], 'next')
        : page([policy(20, 'Billing'), policy(25, 'Billing', SECONDARY_ACCOUNT), policy(5, 'Billing errors')], null);
    };
    const answer = await call(gateway.app, 'GET', '/v2/alerts_policies.json?filter[name]=Billing');
    expect((answer.body.policies as Array<{ id: number }>).map((p) => p.id)).toEqual([10, 20, 30]);
    expect(upstream.received.filter((r) => r.operationName === 'AlertPoliciesSearch').map((r) => r.variables.criteria)).toEqual([{ name: 'Billing' }, { name: 'Billing' }]);
  });

  it(`refuses a list cut at the walk's bound (${MAX_POLICY_PAGES} NerdGraph pages) with a 422 naming filter[name], never a partial list; a list ending on the last page it reads is served`, async () => {
    const policy = (id: number) => ({ id: String(id), name: `P${id}`, incidentPreference: 'PER_POLICY', accountId: PRIMARY_ACCOUNT });
    const endlessFrom = (lastPage: number) => (request: FakeRequest) => {
      if (request.operationName !== 'AlertPoliciesSearch') return undefined;
      const n = upstream.received.filter((r) => r.operationName === 'AlertPoliciesSearch').length;
      return { data: { actor: { account: { alerts: { policiesSearch: { nextCursor: n >= lastPage ? null : `after-${n}`, totalCount: null, policies: [policy(n)] } } } } } };
    };
    override = endlessFrom(Number.POSITIVE_INFINITY);
    const cut = await call(gateway.app, 'GET', '/v2/alerts_policies.json');
    expect(cut).toMatchObject({ status: 422, body: { error: { title: PolicyTitles.tooMany } } });
    expect(cut.headers.get('link')).toBeNull();
    expect(sent('AlertPoliciesSearch')).toBe(MAX_POLICY_PAGES);

    upstream.received.length = 0;
    override = endlessFrom(MAX_POLICY_PAGES);
    const whole = await call(gateway.app, 'GET', '/v2/alerts_policies.json');
    expect(whole.status).toBe(200);
    expect((whole.body.policies as unknown[]).length).toBe(MAX_POLICY_PAGES);
  });

  it('shows nothing of a policy NerdGraph answers for another account', async () => {
    override = (request) =>
      request.operationName === 'AlertPolicyShow'
        ? { data: { actor: { account: { alerts: { policy: { id: String(request.variables.id), name: 'Not yours', incidentPreference: 'PER_POLICY', accountId: SECONDARY_ACCOUNT } } } } } }
        : undefined;
    expect(await call(gateway.app, 'GET', '/v2/alerts_policies/100001.json')).toMatchObject({ status: 404, body: { error: { title: PolicyTitles.notFound } } });
    expect(await call(gateway.app, 'DELETE', '/v2/alerts_policies/100001.json')).toMatchObject({ status: 404 });
    expect(sent('AlertPolicyDelete')).toBe(0);
  });
});

describe('alerts_policies compared by a ROUTE_MODES rule', () => {
  it('answers from the legacy API and shows parity on the policy reads (the times as known gaps)', async () => {
    const config = loadConfig({
      ...process.env,
      ROUTE_MODES: 'GET /v2/alerts_policies*=compare',
      SANDBOX_APM_APPS: '20',
      SANDBOX_DIVERGE: '',
      SANDBOX_LEGACY_JITTER: 'false',
      COMPARE_SAMPLE_RATE: '1',
      COMPARE_MAX_LOOP_UTILISATION: '1',
      NERDGRAPH_URL: '',
      NEW_RELIC_REGION: '',
      LEGACY_REST_URL: '',
      LOG_LEVEL: 'silent',
    });
    const frozen = Date.now();
    const gateway = await buildGateway(config, { logger: createLogger('silent'), now: () => frozen });
    try {
      const paths = ['/v2/alerts_policies.json', '/v2/alerts_policies.json?page=3', `/v2/alerts_policies.json?filter[name]=${encodeURIComponent('Checkout "golden signals"')}`, '/v2/alerts_policies/100001.json', '/v2/alerts_policies/1.json'];
      for (const path of paths) {
        const response = await gateway.app.request(path, { headers: { 'x-api-key': DEMO_KEY } });
        // The legacy face answers: its v2 times are numbers, never the translation's nulls.
        const body = (await response.json()) as { policies?: Array<{ created_at: unknown }>; policy?: { created_at: unknown } };
        if (response.status === 200) expect(typeof (body.policies?.[0] ?? body.policy)?.created_at, path).toBe('number');
      }
      let outcomes = gateway.store.report({ recent: 0 }).totals.outcomes;
      for (let waited = 0; Object.values(outcomes).reduce((sum, n) => sum + n, 0) < paths.length && waited < 20_000; waited += 25) {
        await new Promise((resolve) => setTimeout(resolve, 25));
        outcomes = gateway.store.report({ recent: 0 }).totals.outcomes;
      }
      expect(outcomes).toMatchObject({ match: paths.length, mismatch: 0, error: 0 });
      const routes = gateway.store.report({ recent: 0 }).routes.filter((route) => route.route.startsWith('/v2/alerts_policies') && route.method === 'GET');
      expect(routes.map((route) => [route.route, route.mode, route.outcomes.match])).toEqual(
        expect.arrayContaining([
          ['/v2/alerts_policies.{format}', 'compare', 3],
          ['/v2/alerts_policies/{policy_id}.{format}', 'compare', 2],
        ]),
      );
    } finally {
      await gateway.close();
    }
  });
});
