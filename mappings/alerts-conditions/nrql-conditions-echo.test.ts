import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_KEY, PRIMARY_ACCOUNT, startSandbox } from '../../test/support/harness.ts';
import { forwardTo, startFakeUpstream } from '../../test/support/fake-upstream.ts';
import { deadOrigin } from '../../test/support/http.ts';
import { createModesGateway } from '../../test/support/modes.ts';

/**
 * A NRQL condition PUT never loses a setting NerdGraph holds and v2 has not: a GET-then-PUT echo
 * sends nothing that would reset it, and a changed term carries over the stored term's prediction
 * and health-status reporting. The sandbox's NerdGraph face replaces each given input object as a
 * whole, so a partial object the gateway sent would lose settings here.
 */
const TRANSLATE = '/v2/alerts_nrql_conditions*=translate';
const TERM = { duration: '5', operator: 'above', priority: 'critical', threshold: '0.9', time_function: 'all' };

let upstream: Awaited<ReturnType<typeof startSandbox>>;
let relay: Awaited<ReturnType<typeof startFakeUpstream>>;
let gateway: Awaited<ReturnType<typeof createModesGateway>>;

beforeAll(async () => {
  upstream = await startSandbox({});
  relay = await startFakeUpstream((request, res) => forwardTo(upstream.graphqlUrl, request, res));
  gateway = await createModesGateway({ routes: 'real', nerdgraphUrl: relay.url, legacyUrl: await deadOrigin(), routeModes: TRANSLATE });
});
afterAll(async () => {
  await relay.close();
  await upstream.close();
});

type Condition = Record<string, unknown> & { id: number };
async function call(method: string, path: string, body?: unknown): Promise<{ status: number; json: Record<string, unknown> }> {
  const response = await gateway.app.request(path, {
    method,
    headers: { 'X-Api-Key': DEMO_KEY, 'content-type': 'application/json' },
    ...(body !== undefined && { body: JSON.stringify(body) }),
  });
  return { status: response.status, json: (await response.json()) as Record<string, unknown> };
}
const conditionOf = (answer: { json: Record<string, unknown> }): Condition => answer.json.nrql_condition as Condition;
const updates = (operation = 'NrqlConditionStaticUpdate') => relay.received.filter((r) => r.operationName === operation).map((r) => r.variables.condition as Record<string, unknown>);

/** NerdGraph straight to the sandbox (as the UI or Terraform would write). */
async function nerdgraph(query: string, variables: Record<string, unknown>): Promise<Record<string, unknown>> {
  const response = await fetch(upstream.graphqlUrl, { method: 'POST', headers: { 'content-type': 'application/json', 'api-key': DEMO_KEY }, body: JSON.stringify({ query, variables }) });
  const answer = (await response.json()) as { data?: Record<string, unknown>; errors?: unknown[] };
  expect(answer.errors).toBeUndefined();
  return answer.data ?? {};
}
const TERMS_READ = `terms { priority threshold disableHealthStatusReporting ... on AlertsNrqlConditionTermsWithPrediction { prediction { predictBy preferPredictionViolation } } }`;
async function termsOf(id: number): Promise<unknown> {
  const data = await nerdgraph(`query($a: Int!, $id: ID!) { actor { account(id: $a) { alerts { nrqlCondition(id: $id) { ${TERMS_READ} } } } } }`, { a: PRIMARY_ACCOUNT, id: String(id) });
  return (data as { actor: { account: { alerts: { nrqlCondition: { terms: unknown } } } } }).actor.account.alerts.nrqlCondition.terms;
}

describe('terms NerdGraph holds beyond v2', () => {
  it('a GET-then-PUT echo sends no terms; a changed threshold keeps the prediction and health-status reporting', async () => {
    const made = await nerdgraph(
      `mutation($a: Int!, $p: ID!, $c: AlertsNrqlConditionStaticInput!) { alertsNrqlConditionStaticCreate(accountId: $a, policyId: $p, condition: $c) { id } }`,
      {
        a: PRIMARY_ACCOUNT,
        p: '100003',
        c: {
          name: 'Predicted',
          enabled: true,
          nrql: { query: 'SELECT count(*) FROM Transaction' },
          terms: [{ operator: 'ABOVE', priority: 'CRITICAL', threshold: 5, thresholdDuration: 300, thresholdOccurrences: 'ALL', disableHealthStatusReporting: true, prediction: { predictBy: 3600, preferPredictionViolation: true } }],
        },
      },
    );
    const id = Number((made.alertsNrqlConditionStaticCreate as { id: string }).id);
    const kept = [{ priority: 'CRITICAL', threshold: 5, disableHealthStatusReporting: true, prediction: { predictBy: 3600, preferPredictionViolation: true } }];
    expect(await termsOf(id)).toEqual(kept);

    const listed = await call('GET', '/v2/alerts_nrql_conditions.json?policy_id=100003');
    const read = (listed.json.nrql_conditions as Condition[]).find((c) => c.id === id) as Condition;
    const echoed = await call('PUT', `/v2/alerts_nrql_conditions/${id}.json`, { nrql_condition: { ...read, name: 'Renamed' } });
    expect(echoed.status).toBe(200);
    expect(updates().at(-1)).not.toHaveProperty('terms');
    expect(await termsOf(id)).toEqual(kept);

    const raised = await call('PUT', `/v2/alerts_nrql_conditions/${id}.json`, { nrql_condition: { terms: [{ ...(read.terms as Record<string, unknown>[])[0], threshold: '7' }] } });
    expect(raised.status).toBe(200);
    expect(conditionOf(raised).terms).toEqual([{ duration: '5', operator: 'above', priority: 'critical', threshold: '7', time_function: 'all' }]);
    expect(await termsOf(id)).toEqual([{ ...kept[0], threshold: 7 }]);

    // A new priority has no stored term to carry from: it has none.
    const warned = await call('PUT', `/v2/alerts_nrql_conditions/${id}.json`, { nrql_condition: { terms: [{ ...TERM, threshold: '7', priority: 'critical' }, { ...TERM, priority: 'warning', threshold: '3' }] } });
    expect(warned.status).toBe(200);
    expect(await termsOf(id)).toEqual([
      { ...kept[0], threshold: 7 },
      { priority: 'WARNING', threshold: 3, disableHealthStatusReporting: false, prediction: null },
    ]);
  });
});

describe('a changed nrql, signal or expiration is sent whole', () => {
  const create = async (body: Record<string, unknown>): Promise<Condition> => {
    const made = await call('POST', '/v2/alerts_nrql_conditions/policies/100003.json', { nrql_condition: { name: 'Whole', terms: [TERM], nrql: { query: 'SELECT count(*) FROM Transaction' }, ...body } });
    expect(made.status).toBe(201);
    return conditionOf(made);
  };
  const put = async (id: number, body: Record<string, unknown>): Promise<Condition> => {
    const answer = await call('PUT', `/v2/alerts_nrql_conditions/${id}.json`, { nrql_condition: body });
    expect(answer.status, JSON.stringify(answer.json)).toBe(200);
    return conditionOf(answer);
  };

  it('an offset condition given a method switches to it, the offset cleared', async () => {
    const made = await create({ nrql: { query: 'SELECT count(*) FROM Transaction', since_value: '3' }, signal: { slide_by: 30, fill_option: 'static', fill_value: 5 } });
    const switched = await put(made.id, { signal: { aggregation_method: 'CADENCE', aggregation_delay: 120 } });
    expect(switched).toMatchObject({ nrql: { since_value: null }, signal: { aggregation_method: 'CADENCE', aggregation_delay: 120, aggregation_timer: null, slide_by: 30, fill_option: 'static', fill_value: '5', evaluation_offset: null } });
  });

  it('an EVENT_FLOW condition given an offset switches to it, the method, delay and timer cleared, the query kept', async () => {
    const made = await create({ signal: { aggregation_delay: 300 } });
    const switched = await put(made.id, { nrql: { since_value: 3 } });
    expect(switched).toMatchObject({ nrql: { query: 'SELECT count(*) FROM Transaction', since_value: '3' }, signal: { aggregation_method: null, aggregation_delay: null, aggregation_timer: null, evaluation_offset: 3 } });
  });

  it('EVENT_TIMER replaces the old delay; a changed delay keeps the slide and the fill', async () => {
    const made = await create({ signal: { aggregation_delay: 300, slide_by: 30, fill_option: 'static', fill_value: 5 }, expiration: { expiration_duration: 600, open_violation_on_expiration: true } });
    const timer = await put(made.id, { signal: { aggregation_method: 'EVENT_TIMER', aggregation_timer: 90 } });
    expect(timer.signal).toMatchObject({ aggregation_method: 'EVENT_TIMER', aggregation_delay: null, aggregation_timer: 90, slide_by: 30, fill_option: 'static', fill_value: '5' });
    const flow = await put(made.id, { signal: { aggregation_method: 'EVENT_FLOW', aggregation_delay: 200 } });
    expect(flow.signal).toMatchObject({ aggregation_method: 'EVENT_FLOW', aggregation_delay: 200, aggregation_timer: null, slide_by: 30, fill_option: 'static', fill_value: '5' });
    const closing = await put(made.id, { expiration: { close_violations_on_expiration: true } });
    expect(closing.expiration).toEqual({ expiration_duration: '600', open_violation_on_expiration: true, close_violations_on_expiration: true });
  });

  it('a query is kept as sent (a Terraform heredoc ends in a newline), and an echo of it sends no nrql', async () => {
    const made = await create({ nrql: { query: 'SELECT count(*) FROM Transaction\n' } });
    expect(made.nrql).toMatchObject({ query: 'SELECT count(*) FROM Transaction\n' });
    const before = updates().length;
    await put(made.id, { ...made, name: 'Heredoc' });
    expect(updates().slice(before)[0]).not.toHaveProperty('nrql');
  });
});
