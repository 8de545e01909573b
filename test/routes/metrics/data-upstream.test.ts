import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { entityGuid } from '../../../src/v2/ids.ts';
import { FIXED_NOW, PRIMARY_ACCOUNT, createTestGateway, type TestGateway } from '../../support/harness.ts';
import { accountsAnswer, apmEntity, json, startFakeUpstream, type FakeRequest } from '../../support/fake-upstream.ts';

/**
 * The metric-data route against a scripted NerdGraph: what it sends (one request, names only
 * as escaped literals in variables) and how it reads the answer (rows onto the v2 grid).
 */
const APP = 4242;
const MINUTE_START = Math.floor(FIXED_NOW / 60_000) * 60_000;
const headers = { 'x-api-key': 'NRAK-TEST-KEY' };
type Answer = (request: FakeRequest) => { status?: number; body: unknown; delayMs?: number };

let respond: Answer;
let upstream: Awaited<ReturnType<typeof startFakeUpstream>>;
let gateway: TestGateway;

function metricAnswer(
  data: unknown[],
  known: string[],
  entity: unknown = { guid: entityGuid(PRIMARY_ACCOUNT, 'APM', 'APPLICATION', APP), accountId: PRIMARY_ACCOUNT },
  metadata?: unknown,
) {
  return { data: { actor: { entity, account: { data: { results: data, ...(metadata === undefined ? {} : { metadata }) }, known: { results: [{ names: known }] } } } } };
}

const dataCalls = (): FakeRequest[] => upstream.received.filter((r) => r.operationName === 'ApplicationMetricData');

beforeAll(async () => {
  upstream = await startFakeUpstream(async (request, res) => {
    if (request.operationName === 'AccessibleAccounts') return json(res, 200, accountsAnswer([PRIMARY_ACCOUNT]));
    const { status = 200, body, delayMs = 0 } = respond(request);
    await new Promise((resolve) => setTimeout(resolve, delayMs));
    json(res, status, body);
  });
  gateway = await createTestGateway({ nerdgraphUrl: upstream.url });
});
afterAll(() => upstream.close());

const url = (query: string): string => `/v2/applications/${APP}/metrics/data.json?${query}`;
const range = 'from=2026-11-22T11:00:00Z&to=2026-11-22T11:03:00Z';

describe('metric data over a scripted NerdGraph', () => {
  it('sends one request whose NRQL names the app and the metrics as literals, and lays rows on the v2 grid', async () => {
    respond = () => ({
      body: metricAnswer(
        [
          { beginTimeSeconds: Date.UTC(2026, 10, 22, 11, 1) / 1000, endTimeSeconds: Date.UTC(2026, 10, 22, 11, 2) / 1000, facet: 'HttpDispatcher', metricTimesliceName: 'HttpDispatcher', v0: 12, v1: 340.5 },
        ],
        ['HttpDispatcher'],
      ),
    });
    const before = dataCalls().length;
    const response = await gateway.app.request(url(`${range}&names[]=HttpDispatcher&names[]=Nope&values[]=call_count&values[]=average_response_time`), { headers });
    expect(response.status).toBe(200);
    expect(dataCalls().length - before).toBe(1);
    const sent = dataCalls().at(-1) as FakeRequest;
    expect(sent.variables.guid).toBe(entityGuid(PRIMARY_ACCOUNT, 'APM', 'APPLICATION', APP));
    expect(sent.variables.data).toBe(
      "SELECT count(newrelic.timeslice.value) AS v0, average(newrelic.timeslice.value) * 1000 AS v1 FROM Metric WHERE appId = 4242 AND metricTimesliceName IN ('HttpDispatcher', 'Nope') AND scope IS NULL FACET metricTimesliceName LIMIT MAX SINCE 1795345200000 UNTIL 1795345380000 TIMESERIES 1 minute",
    );
    expect(sent.variables.known).toBe(
      `SELECT uniques(metricTimesliceName, 10000) AS names FROM Metric WHERE appId = 4242 AND metricTimesliceName IN ('HttpDispatcher', 'Nope') AND scope IS NULL AND newrelic.timeslice.value IS NOT NULL SINCE ${MINUTE_START - 7 * 86_400_000} UNTIL ${MINUTE_START + 60_000}`,
    );
    const text = await response.clone().text();
    // Values keep the request's order (toEqual below ignores key order).
    expect(text.indexOf('"call_count":12')).toBeLessThan(text.indexOf('"average_response_time":340.5'));
    expect(await response.json()).toEqual({
      metric_data: {
        from: '2026-11-22T11:00:00+00:00',
        to: '2026-11-22T11:03:00+00:00',
        metrics_not_found: ['Nope'],
        metrics_found: ['HttpDispatcher'],
        metrics: [
          {
            name: 'HttpDispatcher',
            timeslices: [
              { from: '2026-11-22T11:00:00+00:00', to: '2026-11-22T11:01:00+00:00', values: { call_count: 0, average_response_time: 0 } },
              { from: '2026-11-22T11:01:00+00:00', to: '2026-11-22T11:02:00+00:00', values: { call_count: 12, average_response_time: 340.5 } },
              { from: '2026-11-22T11:02:00+00:00', to: '2026-11-22T11:03:00+00:00', values: { call_count: 0, average_response_time: 0 } },
            ],
          },
        ],
      },
    });
    expect(response.headers.get('etag')).toMatch(/^"[A-Za-z0-9_-]+"$/);
    expect(response.headers.get('cache-control')).toBe('max-age=0, private, must-revalidate');
  });

  it('divides per-minute and percent values by the window NerdGraph used, not the one asked (a long window snaps)', async () => {
    // 47 h 59 min, summarized: NRDB resolves it on 5-minute aggregations, both ends snapped back
    // to a boundary ("Set a query's time range", metric query snapping: 00:04 -> 00:00, 00:03 ->
    // 00:00), and reports the window it summed over in metadata.timeWindow: 11:00 to 10:55, 47 h
    // 55 min. The query's {W} literal is the 47 h 59 min asked. Recorded the way NerdGraph
    // computes the sent formulas.
    const from = Date.UTC(2026, 10, 20, 11, 0);
    const to = Date.UTC(2026, 10, 22, 10, 59);
    const asked = (to - from) / 1000;
    const used = asked - 4 * 60;
    const calls = 172_800;
    const callTime = 864;
    respond = () => ({
      body: metricAnswer(
        [{ facet: 'HttpDispatcher', metricTimesliceName: 'HttpDispatcher', v0: calls, v1: (calls * 60) / asked, v2: (callTime * 60) / asked, v3: (1000 * callTime) / calls }],
        ['HttpDispatcher'],
        undefined,
        { timeWindow: { begin: from, end: from + used * 1000 } },
      ),
    });
    const values = ['call_count', 'calls_per_minute', 'total_call_time_per_minute', 'average_response_time'].map((value) => `values[]=${value}`).join('&');
    const response = await gateway.app.request(
      url(`from=${new Date(from).toISOString()}&to=${new Date(to).toISOString()}&summarize=true&names[]=HttpDispatcher&${values}`),
      { headers },
    );
    expect(response.status).toBe(200);
    const sent = dataCalls().at(-1) as FakeRequest;
    expect(sent.query).toMatch(/data: nrql\(query: \$data[^}]*\{\s*results[\s\S]*metadata\s*\{\s*timeWindow\s*\{\s*begin\s+end/);
    expect(sent.variables.data).toContain(`count(newrelic.timeslice.value) * 60 / ${asked} AS v1`);
    const body = (await response.json()) as { metric_data: { metrics: Array<{ timeslices: Array<{ values: Record<string, number> }> }> } };
    const got = body.metric_data.metrics[0]?.timeslices[0]?.values as Record<string, number>;
    expect(got.call_count).toBe(calls);
    expect(got.calls_per_minute).toBeCloseTo((calls * 60) / used, 9);
    expect(got.total_call_time_per_minute).toBeCloseTo((callTime * 60) / used, 9);
    expect(got.average_response_time).toBe((1000 * callTime) / calls);
  });

  it('answers If-None-Match with 304 and no body', async () => {
    respond = () => ({ body: metricAnswer([], ['Apdex']) });
    const first = await gateway.app.request(url(`${range}&names[]=Apdex`), { headers });
    const etag = first.headers.get('etag') as string;
    const second = await gateway.app.request(url(`${range}&names[]=Apdex`), { headers: { ...headers, 'if-none-match': `W/"other", ${etag}` } });
    expect(second.status).toBe(304);
    expect(await second.text()).toBe('');
    expect(second.headers.get('etag')).toBe(etag);
  });

  it('answers a POST with the full body even when If-None-Match matches (304 is for GET and HEAD)', async () => {
    respond = () => ({ body: metricAnswer([], ['Apdex']) });
    const first = await gateway.app.request(url(`${range}&names[]=Apdex`), { headers });
    const post = await gateway.app.request(`/v2/applications/${APP}/metrics/data.json`, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/x-www-form-urlencoded', 'if-none-match': first.headers.get('etag') as string },
      body: `${range}&names[]=Apdex`,
    });
    expect(post.status).toBe(200);
  });

  it('places a row NRQL anchored off the grid in the slice holding its start, and refuses two rows for one slice', async () => {
    const at = (h: number, m: number, s = 0): number => Date.UTC(2026, 10, 22, h, m, s) / 1000;
    respond = () => ({ body: metricAnswer([{ beginTimeSeconds: at(11, 1, 30), facet: 'HttpDispatcher', v0: 7 }], ['HttpDispatcher']) });
    const shifted = (await (await gateway.app.request(url(`${range}&names[]=HttpDispatcher&values[]=call_count`), { headers })).json()) as {
      metric_data: { metrics: Array<{ timeslices: Array<{ values: { call_count: number } }> }> };
    };
    expect(shifted.metric_data.metrics[0]?.timeslices.map((t) => t.values.call_count)).toEqual([0, 7, 0]);

    respond = () => ({
      body: metricAnswer(
        [
          { beginTimeSeconds: at(11, 1), facet: 'HttpDispatcher', v0: 7 },
          { beginTimeSeconds: at(11, 1, 30), facet: 'HttpDispatcher', v0: 8 },
        ],
        ['HttpDispatcher'],
      ),
    });
    expect((await gateway.app.request(url(`${range}&names[]=HttpDispatcher&values[]=call_count`), { headers })).status).toBe(502);
  });

  it('coalesces concurrent identical requests onto one upstream request', async () => {
    respond = () => ({ body: metricAnswer([], ['Apdex']), delayMs: 100 });
    const before = dataCalls().length;
    const answers = await Promise.all(Array.from({ length: 6 }, () => gateway.app.request(url(`${range}&names[]=Apdex`), { headers })));
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200, 200, 200]);
    expect(dataCalls().length - before).toBe(1);
  });

  it('escapes hostile names into their literal and never sends names with control characters', async () => {
    respond = () => ({ body: metricAnswer([], []) });
    const hostile = ["x') OR appId IN (1", 'a\\', "\\'", 'line\nbreak'];
    const query = hostile.map((name) => `names[]=${encodeURIComponent(name)}`).join('&');
    const response = await gateway.app.request(url(`${range}&${query}`), { headers });
    const body = (await response.json()) as { metric_data: { metrics_not_found: string[]; metrics_found: string[] } };
    expect(body.metric_data.metrics_not_found).toEqual(hostile);
    const sent = dataCalls().at(-1) as FakeRequest;
    expect(sent.variables.data).toContain("metricTimesliceName IN ('x\\') OR appId IN (1', 'a\\\\', '\\\\\\'')");
    expect(String(sent.variables.data)).not.toContain('line');
  });

  it('answers 404 when NerdGraph has no such app in the account, and 502 when a value is not a number', async () => {
    respond = () => ({ body: metricAnswer([], [], null) });
    const missing = await gateway.app.request(url(`${range}&names[]=Apdex`), { headers });
    expect([missing.status, await missing.json()]).toEqual([404, { error: { title: 'No Application found with the given ID' } }]);

    respond = () => ({ body: metricAnswer([{ beginTimeSeconds: Date.UTC(2026, 10, 22, 11, 1) / 1000, facet: 'Apdex', v0: '12' }], []) });
    const broken = await gateway.app.request(url(`${range}&names[]=Apdex&values[]=s`), { headers });
    expect(broken.status).toBe(502);
  });

  it('validates before calling NerdGraph: no names, a bad time, a malformed id', async () => {
    const before = dataCalls().length;
    const answers = await Promise.all([
      gateway.app.request(url(range), { headers }),
      gateway.app.request(url('names[]=Apdex&from=yesterday'), { headers }),
      gateway.app.request(`/v2/applications/12ab/metrics/data.json?names[]=Apdex`, { headers }),
    ]);
    expect(answers.map((a) => a.status)).toEqual([422, 422, 404]);
    expect(dataCalls().length).toBe(before);
  });
});

describe('metric data with the read micro-cache on', () => {
  it('never serves, nor keeps, an answer whose call began before a write through the gateway', async () => {
    const cached = await createTestGateway({ nerdgraphUrl: upstream.url, microCacheMs: 1_000 });
    let count = 12;
    let held = true;
    respond = (request) => {
      if (request.operationName === 'ApplicationMetricData') {
        const row = { beginTimeSeconds: Date.UTC(2026, 10, 22, 11, 1) / 1000, endTimeSeconds: Date.UTC(2026, 10, 22, 11, 2) / 1000, facet: 'HttpDispatcher', metricTimesliceName: 'HttpDispatcher', v0: count };
        // The first answer is read now and arrives late: a call in flight across the write.
        const delayMs = held ? 400 : 0;
        held = false;
        return { body: metricAnswer([row], ['HttpDispatcher']), delayMs };
      }
      if (request.operationName === 'ApplicationByGuid') return { body: { data: { actor: { entity: apmEntity(PRIMARY_ACCOUNT, APP), browser: null } } } };
      // The write's mutation: whatever NerdGraph says, it was sent.
      return { body: { data: null, errors: [{ message: 'scripted' }] } };
    };
    const path = url(`${range}&names[]=HttpDispatcher&values[]=call_count`);
    const callCount = async (response: Response): Promise<number> =>
      ((await response.json()) as { metric_data: { metrics: Array<{ timeslices: Array<{ values: { call_count: number } }> }> } }).metric_data.metrics[0]?.timeslices[1]?.values.call_count ?? -1;

    const calls = dataCalls().length;
    const before = cached.app.request(path, { headers });
    // The write starts once the first call has reached NerdGraph (its answer is held).
    while (dataCalls().length === calls) await new Promise((resolve) => setTimeout(resolve, 5));
    await cached.app.request(`/v2/applications/${APP}.json`, {
      method: 'PUT',
      headers: { ...headers, 'content-type': 'application/json' },
      body: JSON.stringify({ application: { name: 'renamed' } }),
    });
    count = 13;
    const after = cached.app.request(path, { headers });
    expect(await callCount(await before)).toBe(12);
    expect(await callCount(await after)).toBe(13);
    expect(await callCount(await cached.app.request(path, { headers }))).toBe(13);
  });
});
