import { expect, it } from 'vitest';
import type { SandboxData } from '../../sandbox/model.ts';
import type { JsonValue } from '../../src/v2/xml.ts';
import { describeDifferential, type DifferentialCase, type DifferentialOptions } from '../../test/support/differential.ts';
import { DEMO_KEY, MULTI_KEY, PRIMARY_ACCOUNT, SECONDARY_ACCOUNT, SECONDARY_KEY } from '../../test/support/harness.ts';

/**
 * alerts_nrql_conditions (list, show, create static and baseline, update, delete) and the other
 * condition families' DELETE, differentially: two identical sandboxes on one clock; the same
 * sequence goes to the gateway (translating, over the first sandbox's NerdGraph face) and to the
 * second sandbox's legacy /v2 face. Condition and policy ids are one number on both sides (each
 * world hands out the next id alike), so answers compare directly, with only the mappings' gap
 * paths removed, and (NRQL routes) every object's keys in the same order (v2's: type first, entity_guid last);
 * afterwards both worlds hold the same conditions, field for field.
 *
 * Left out on purpose (each side would write differently, and the worlds would part): a change of
 * type (the gateway refuses it, v2 took it), thresholds written with trailing zeros (NerdGraph keeps
 * a float: 1.50 reads back 1.5). The routes tests cover those.
 */
const LIST = 'alerts_nrql_conditions.list';
const CREATE = 'alerts_nrql_conditions.create';
const SHOW = 'alerts_nrql_conditions.show';
const UPDATE = 'alerts_nrql_conditions.update';
const DELETE = 'alerts_nrql_conditions.delete';
/** The routes whose answers are compared in key order too (the other families' deletes answer null gaps where v2 had objects). */
const NRQL_ROUTES = [LIST, SHOW, CREATE, UPDATE, DELETE];
const FAMILY_DELETES = ['alerts_conditions', 'alerts_external_service_conditions', 'alerts_synthetics_conditions', 'alerts_location_failure_conditions'] as const;

const demo = { 'X-Api-Key': DEMO_KEY };
const json = { ...demo, 'content-type': 'application/json' };
const xml = { ...demo, 'content-type': 'application/xml' };
const form = { ...demo, 'content-type': 'application/x-www-form-urlencoded' };
const TERM = { duration: '5', operator: 'above', priority: 'critical', threshold: '0.9', time_function: 'all' };
const NRQL = { query: 'SELECT count(*) FROM TransactionError', since_value: '3' };

const options: DifferentialOptions = { seed: 13, apmApps: 40, twin: true, tickMs: 1_000 };

/** Every object's keys, in document order: the exact comparison sorts keys, and v2's order (type first, entity_guid last) is part of the shape. */
function keyOrders(value: JsonValue, into: string[] = []): string[] {
  if (Array.isArray(value)) for (const item of value) keyOrders(item, into);
  else if (value !== null && typeof value === 'object') {
    into.push(Object.keys(value).join(','));
    for (const item of Object.values(value)) keyOrders(item as JsonValue, into);
  }
  return into;
}
const inV2Order: NonNullable<DifferentialCase['judge']> = (pair, standard) => {
  const [gateway, legacy] = [keyOrders(pair.gateway.body).join(' | '), keyOrders(pair.legacy.body).join(' | ')];
  return standard() ?? (gateway === legacy ? undefined : `key order differs: gateway ${gateway.slice(0, 300)} / legacy ${legacy.slice(0, 300)}`);
};

function corpus(data: SandboxData): DifferentialCase[] {
  const primary = data.alerts.policies.filter((p) => p.accountId === PRIMARY_ACCOUNT).map((p) => p.id);
  const secondaryPolicy = data.alerts.policies.find((p) => p.accountId === SECONDARY_ACCOUNT)?.id as number;
  const conditionsOf = (family: string, accountId = PRIMARY_ACCOUNT) => data.alerts.conditions.filter((c) => c.accountId === accountId && c.family === family);
  const nrql = conditionsOf('alerts_nrql_conditions').filter((c) => c.policyId !== primary[0]);
  const foreignNrql = conditionsOf('alerts_nrql_conditions', SECONDARY_ACCOUNT)[0]?.id as number;
  const busy = primary[0] as number;
  const target = primary[5] as number;
  const cases: DifferentialCase[] = [];
  const add = (route: string, name: string, method: string, path: string, headers: Record<string, string> = demo, body?: unknown, extra: Partial<DifferentialCase> = {}) =>
    cases.push({ route, name, method, path, headers, ...(body !== undefined && { body: typeof body === 'string' ? body : JSON.stringify(body) }), ...(NRQL_ROUTES.includes(route) && { judge: inV2Order }), ...extra });
  const list = (label: string, policy: number) => {
    for (const format of ['json', 'xml']) for (const page of ['', '&page=2', '&page=3', '&page=4']) add(LIST, `${label} ${format} ${page}`, 'GET', `/v2/alerts_nrql_conditions.${format}?policy_id=${policy}${page}`);
  };
  const create = (name: string, condition: unknown, policy = target, headers: Record<string, string> = json, format = 'json') =>
    add(CREATE, name, 'POST', `/v2/alerts_nrql_conditions/policies/${policy}.${format}`, headers, { nrql_condition: condition });
  const update = (name: string, id: number | string, condition: unknown, headers: Record<string, string> = json) => add(UPDATE, name, 'PUT', `/v2/alerts_nrql_conditions/${id}.json`, headers, { nrql_condition: condition });

  // ---- list
  list('busy policy', busy);
  for (const policy of primary.slice(1, 9)) add(LIST, `policy ${policy}`, 'GET', `/v2/alerts_nrql_conditions.json?policy_id=${policy}`);
  add(LIST, 'policy_id[] spelling absent', 'GET', '/v2/alerts_nrql_conditions.json');
  add(LIST, 'blank policy_id', 'GET', '/v2/alerts_nrql_conditions.json?policy_id=');
  add(LIST, 'bad policy_id', 'GET', '/v2/alerts_nrql_conditions.json?policy_id=abc');
  add(LIST, 'unknown policy', 'GET', '/v2/alerts_nrql_conditions.json?policy_id=999999');
  add(LIST, "another account's policy", 'GET', `/v2/alerts_nrql_conditions.json?policy_id=${secondaryPolicy}`);
  add(LIST, 'secondary key, own policy', 'GET', `/v2/alerts_nrql_conditions.json?policy_id=${secondaryPolicy}`, { 'X-Api-Key': SECONDARY_KEY });
  add(LIST, 'multi pinned to secondary', 'GET', `/v2/alerts_nrql_conditions.xml?policy_id=${secondaryPolicy}`, { 'X-Api-Key': MULTI_KEY, 'X-Account-Id': String(SECONDARY_ACCOUNT) });
  add(LIST, 'bad page', 'GET', `/v2/alerts_nrql_conditions.json?policy_id=${busy}&page=0`);
  add(LIST, 'bad key', 'GET', `/v2/alerts_nrql_conditions.json?policy_id=${busy}`, { 'X-Api-Key': 'NRAK-NOT-A-KEY' });
  add(LIST, 'missing key', 'GET', `/v2/alerts_nrql_conditions.json?policy_id=${busy}`, {});

  // ---- show: the seeded conditions (the sandbox seeds static ones only: baseline and outlier shows are in
  // nrql-conditions.test.ts, and the created ones are compared here as answers to their creates), then the refusals
  for (const type of ['static', 'baseline', 'outlier']) {
    const seeded = nrql.find((c) => c.fields.type === type)?.id;
    if (seeded !== undefined) for (const format of ['json', 'xml']) add(SHOW, `${type} ${format}`, 'GET', `/v2/alerts_nrql_conditions/${seeded}.${format}`);
  }
  add(SHOW, 'unknown', 'GET', '/v2/alerts_nrql_conditions/999999999.json');
  add(SHOW, 'malformed', 'GET', '/v2/alerts_nrql_conditions/abc.json');
  add(SHOW, "another account's", 'GET', `/v2/alerts_nrql_conditions/${foreignNrql}.json`);
  add(SHOW, 'secondary key, its own', 'GET', `/v2/alerts_nrql_conditions/${foreignNrql}.json`, { 'X-Api-Key': SECONDARY_KEY });
  add(SHOW, 'of another family', 'GET', `/v2/alerts_nrql_conditions/${conditionsOf('alerts_conditions')[0]?.id}.json`);
  add(SHOW, 'bad key', 'GET', `/v2/alerts_nrql_conditions/${nrql[0]?.id}.json`, { 'X-Api-Key': 'NRAK-NOT-A-KEY' });

  // ---- create
  create('static, defaults', { name: 'Errors', terms: [TERM], nrql: NRQL });
  create('static, every field', { type: 'static', name: 'Slow', enabled: false, runbook_url: 'https://runbooks.example.com/slow', value_function: 'single_value', violation_time_limit_seconds: 7200, terms: [{ ...TERM, operator: 'below', time_function: 'any', duration: 15 }, { ...TERM, priority: 'warning', operator: 'equal', threshold: 3 }], nrql: { query: 'SELECT average(duration) FROM Transaction', since_value: 7 } });
  create('baseline, defaults', { type: 'baseline', name: 'Drop', terms: [{ ...TERM, threshold: '2' }], nrql: NRQL });
  create('baseline, direction', { type: 'baseline', name: 'Both ways', baseline_direction: 'upper_and_lower', terms: [TERM], nrql: NRQL });
  add(CREATE, 'XML body', 'POST', `/v2/alerts_nrql_conditions/policies/${target}.xml`, xml, `<nrql_condition><name>From XML</name><enabled>false</enabled><terms><term><duration>10</duration><operator>above</operator><priority>critical</priority><threshold>4</threshold><time_function>any</time_function></term></terms><nrql><query>SELECT count(*) FROM Transaction</query><since_value>2</since_value></nrql></nrql_condition>`);
  create('in the busy policy', { name: 'One more', terms: [TERM], nrql: NRQL }, busy);
  create('unknown policy', { name: 'x', terms: [TERM], nrql: NRQL }, 999999);
  create("another account's policy", { name: 'x', terms: [TERM], nrql: NRQL }, secondaryPolicy);
  add(CREATE, 'malformed policy id', 'POST', '/v2/alerts_nrql_conditions/policies/abc.json', json, { nrql_condition: { name: 'x', terms: [TERM], nrql: NRQL } });
  create('secondary key, own policy', { name: 'Theirs', terms: [TERM], nrql: NRQL }, secondaryPolicy, { 'X-Api-Key': SECONDARY_KEY, 'content-type': 'application/json' });
  add(CREATE, 'no wrapper', 'POST', `/v2/alerts_nrql_conditions/policies/${target}.json`, json, { name: 'x' });
  create('blank name', { name: '  ', terms: [TERM], nrql: NRQL });
  create('no terms', { name: 'x', terms: [], nrql: NRQL });
  // v2's 422 texts are UNCONFIRMED; where the two word a bad value differently, statuses only.
  const worded = { statusGap: [422, 422] } as const;
  add(CREATE, 'bad duration', 'POST', `/v2/alerts_nrql_conditions/policies/${target}.json`, json, { nrql_condition: { name: 'x', terms: [{ ...TERM, duration: 'soon' }], nrql: NRQL } }, worded);
  // FN #terms_operator: the three NRQL-only operators.
  for (const operator of ['above_or_equals', 'below_or_equals', 'not_equals']) create(`operator ${operator}`, { name: operator, terms: [{ ...TERM, operator }], nrql: NRQL });
  create('bad operator', { name: 'x', terms: [{ ...TERM, operator: 'around' }], nrql: NRQL });
  // CALLS #create-nrql-conditions: signal and expiration, no since_value; FN #value_function sum.
  create('signal and expiration, no since_value', { name: 'Streaming', enabled: true, value_function: 'sum', terms: [{ ...TERM, duration: '6' }], nrql: { query: NRQL.query }, signal: { aggregation_window: '120', slide_by: '60', aggregation_method: 'EVENT_TIMER', aggregation_timer: 90, fill_option: 'last_value' }, expiration: { expiration_duration: '900', open_violation_on_expiration: true } });
  create('cadence with a delay', { name: 'Cadence', terms: [{ ...TERM, duration: '4' }], nrql: { query: NRQL.query }, signal: { aggregation_method: 'CADENCE', aggregation_delay: 300 } });
  create('outlier', { type: 'outlier', name: 'Odd one', expected_groups: 2, ignore_overlap: false, terms: [TERM], nrql: { query: 'SELECT average(duration) FROM Transaction FACET host' } });
  create('time limit of 30 days', { name: 'Long', violation_time_limit_seconds: 2592000, terms: [TERM], nrql: NRQL });
  create('since_value and a method', { name: 'x', terms: [TERM], nrql: NRQL, signal: { aggregation_method: 'EVENT_FLOW' } });
  create('a duration not a multiple of the window', { name: 'x', terms: [TERM], nrql: { query: NRQL.query }, signal: { aggregation_window: 120 } });
  create('slide_by not dividing the window', { name: 'x', terms: [TERM], nrql: { query: NRQL.query }, signal: { slide_by: 45 } }, target, json, 'json');
  create('bad time function', { name: 'x', terms: [{ ...TERM, time_function: 'most' }], nrql: NRQL });
  add(CREATE, 'bad since_value', 'POST', `/v2/alerts_nrql_conditions/policies/${target}.json`, json, { nrql_condition: { name: 'x', terms: [TERM], nrql: { ...NRQL, since_value: '30' } } }, worded);
  create('blank query', { name: 'x', terms: [TERM], nrql: { ...NRQL, query: '' } });
  create('bad violation time limit', { name: 'x', violation_time_limit_seconds: 60, terms: [TERM], nrql: NRQL });
  create('baseline_direction on a static condition', { name: 'x', baseline_direction: 'lower_only', terms: [TERM], nrql: NRQL });
  create('baseline below', { type: 'baseline', name: 'x', terms: [{ ...TERM, operator: 'below' }], nrql: NRQL });
  // Both refuse; the texts differ.
  add(CREATE, 'outlier without expected_groups', 'POST', `/v2/alerts_nrql_conditions/policies/${target}.json`, json, { nrql_condition: { type: 'outlier', name: 'x', terms: [TERM], nrql: NRQL } }, { statusGap: [422, 422] });
  add(CREATE, 'bad key', 'POST', `/v2/alerts_nrql_conditions/policies/${target}.json`, { 'X-Api-Key': 'NRAK-NOT-A-KEY', 'content-type': 'application/json' }, { nrql_condition: { name: 'x', terms: [TERM], nrql: NRQL } });
  list('after creates', target);

  // ---- update
  const [u0, u1, u2, u3] = nrql.filter((c) => c.fields.type === 'static').map((c) => c.id);
  update('disable', u0 as number, { enabled: false });
  update('rename and runbook', u0 as number, { name: 'Renamed', runbook_url: 'https://runbooks.example.com/r' });
  update('replace terms', u1 as number, { terms: [{ ...TERM, threshold: 12, duration: 30 }, { ...TERM, priority: 'warning', threshold: '6' }] });
  update('replace nrql', u2 as number, { nrql: { query: 'SELECT max(duration) FROM Transaction', since_value: 5 } });
  update('time limit', u3 as number, { violation_time_limit_seconds: 86400 });
  update('clear runbook', u0 as number, { runbook_url: '' });
  update('nrql query alone (CALLS #update-nrql-conditions)', u1 as number, { nrql: { query: 'SELECT count(*) FROM Transaction' } });
  update('to an aggregation method', u2 as number, { signal: { aggregation_method: 'EVENT_FLOW', aggregation_delay: 60 } });
  update('expiration', u2 as number, { expiration: { expiration_duration: 600, close_violations_on_expiration: true } });
  // A null clears the key, to v2's default where FN gives one (fill_value 0 with static, fill none, a 60 s window), alike on both faces.
  update('slide and a static fill', u2 as number, { signal: { slide_by: 30, fill_option: 'static', fill_value: 4 } });
  update('fill_value null', u2 as number, { signal: { fill_value: null } });
  update('slide_by null', u2 as number, { signal: { slide_by: null } });
  update('fill_option null', u2 as number, { signal: { fill_option: null } });
  update('aggregation_window null', u2 as number, { signal: { aggregation_window: null } });
  update('baseline_direction on a static condition', u3 as number, { baseline_direction: 'lower_only' });
  update('value_function sum', u3 as number, { value_function: 'sum' });
  for (const id of [u0, u1, u2, u3]) add(SHOW, `after updates, ${id}`, 'GET', `/v2/alerts_nrql_conditions/${id}.json`);
  update('nothing given', u3 as number, {});
  update('unknown', 999999999, { name: 'x' });
  update('malformed id', 'abc', { name: 'x' });
  update("another account's", foreignNrql, { name: 'x' });
  update('bad terms', u1 as number, { terms: [{ ...TERM, priority: 'urgent' }] });
  update('blank name', u1 as number, { name: '' });
  add(UPDATE, 'no wrapper', 'PUT', `/v2/alerts_nrql_conditions/${u1}.json`, json, { name: 'x' });
  add(UPDATE, 'form body', 'PUT', `/v2/alerts_nrql_conditions/${u3}.json`, form, 'nrql_condition[enabled]=false&nrql_condition[name]=From+form');
  add(UPDATE, 'XML', 'PUT', `/v2/alerts_nrql_conditions/${u2}.xml`, xml, '<nrql_condition><enabled>false</enabled></nrql_condition>');
  add(UPDATE, 'bad key', 'PUT', `/v2/alerts_nrql_conditions/${u2}.json`, { 'X-Api-Key': 'NRAK-NOT-A-KEY', 'content-type': 'application/json' }, { nrql_condition: { name: 'x' } });

  // ---- delete, NRQL
  const doomed = nrql.slice(6, 12).map((c) => c.id);
  for (const [i, id] of doomed.entries()) add(DELETE, `seeded ${i}`, 'DELETE', `/v2/alerts_nrql_conditions/${id}.${i % 2 === 0 ? 'json' : 'xml'}`);
  add(DELETE, 'again', 'DELETE', `/v2/alerts_nrql_conditions/${doomed[0]}.json`);
  add(SHOW, 'deleted', 'GET', `/v2/alerts_nrql_conditions/${doomed[0]}.json`);
  add(DELETE, 'unknown', 'DELETE', '/v2/alerts_nrql_conditions/999999999.json');
  add(DELETE, 'malformed', 'DELETE', '/v2/alerts_nrql_conditions/abc.json');
  add(DELETE, "another account's", 'DELETE', `/v2/alerts_nrql_conditions/${foreignNrql}.json`);
  add(DELETE, 'of another family', 'DELETE', `/v2/alerts_nrql_conditions/${conditionsOf('alerts_conditions')[0]?.id}.json`);
  add(DELETE, 'bad key', 'DELETE', `/v2/alerts_nrql_conditions/${doomed[1]}.json`, { 'X-Api-Key': 'NRAK-NOT-A-KEY' });

  // ---- delete, the other families (the answer's other keys are gaps: NerdGraph cannot read them)
  for (const family of FAMILY_DELETES) {
    const route = `${family}.delete`;
    const own = conditionsOf(family).slice(0, 2);
    for (const [i, c] of own.entries()) add(route, `seeded ${i}`, 'DELETE', `/v2/${family}/${c.id}.${i === 0 ? 'json' : 'xml'}`);
    add(route, 'a NRQL condition', 'DELETE', `/v2/${family}/${nrql[20]?.id}.json`);
    add(route, 'malformed', 'DELETE', `/v2/${family}/x.json`);
    // The gateway's not-found title is its own (NerdGraph's NOT_FOUND): statuses only.
    add(route, 'again', 'DELETE', `/v2/${family}/${own[0]?.id}.json`, demo, undefined, { statusGap: [404, 404] });
    add(route, "another account's", 'DELETE', `/v2/${family}/${conditionsOf(family, SECONDARY_ACCOUNT)[0]?.id}.json`, demo, undefined, { statusGap: [404, 404] });
  }
  list('after deletes', target);
  for (const policy of primary.slice(1, 12)) add(LIST, `after all, policy ${policy}`, 'GET', `/v2/alerts_nrql_conditions.json?policy_id=${policy}`);
  return cases;
}

describeDifferential('differential: alerts_nrql_conditions and condition deletes, gateway == legacy /v2, answer for answer and state for state', options, (faces) => {
  it('answers every step alike, and both worlds end with the same conditions', async () => {
    const cases = corpus(faces.legacy.data);
    const report = await faces.expectAlike(cases);
    for (const route of [LIST, SHOW, CREATE, UPDATE, DELETE]) console.info(`differential corpus ${route}: ${cases.filter((c) => c.route === route).length} requests, statuses ${report.statuses(route).join(',')}`);
    expect(report.statuses(LIST)).toEqual(expect.arrayContaining([200, 401, 404, 422]));
    expect(report.statuses(SHOW)).toEqual(expect.arrayContaining([200, 401, 404]));
    expect(report.statuses(CREATE)).toEqual(expect.arrayContaining([201, 400, 401, 404, 422]));
    expect(report.statuses(UPDATE)).toEqual(expect.arrayContaining([200, 400, 401, 404, 422]));
    expect(report.statuses(DELETE)).toEqual(expect.arrayContaining([200, 401, 404]));
    const state = (data: SandboxData) => JSON.stringify([...data.alerts.conditions].sort((a, b) => a.id - b.id).map((c) => [c.id, c.accountId, c.policyId, c.family, c.fields]));
    expect(state(faces.upstream.data)).toBe(state(faces.legacy.data));
  }, 240_000);
});
