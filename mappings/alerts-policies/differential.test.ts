import { expect, it } from 'vitest';
import type { AlertPolicy } from '../../sandbox/alerts.ts';
import type { SandboxData } from '../../sandbox/model.ts';
import { describeDifferential, type DifferentialCase } from '../../test/support/differential.ts';
import { DEMO_KEY, MULTI_KEY, PRIMARY_ACCOUNT, SECONDARY_ACCOUNT, SECONDARY_KEY } from '../../test/support/harness.ts';

/**
 * alerts_policies (list with filter[name] and pages, show, create, update, delete),
 * differentially: two identical sandboxes on one clock. The same sequence of reads and writes
 * goes to the gateway (translating over the first sandbox's NerdGraph face) and to the second
 * sandbox's legacy /v2 face, which keeps its own v2 policy store and answers from it. Every
 * answer must match (status, content type, Link, body) bar the mappings' gap paths (created_at
 * and updated_at: NerdGraph has no policy times), and afterwards both worlds hold the same
 * policies. Policy ids are the same integers on both sides.
 */
const ROUTES = ['alerts-policies.list', 'alerts-policies.show', 'alerts-policies.create', 'alerts-policies.update', 'alerts-policies.delete'] as const;
type Route = (typeof ROUTES)[number];

const json = 'application/json';
const xml = 'application/xml';
const form = 'application/x-www-form-urlencoded';

interface Step {
  route: Route;
  name: string;
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  path: string;
  body?: string;
  contentType?: string;
  headers?: Record<string, string>;
}

function steps(data: SandboxData): Step[] {
  const primary = data.alerts.policies.filter((p) => p.accountId === PRIMARY_ACCOUNT);
  const [first, second, third] = primary as [AlertPolicy, AlertPolicy, AlertPolicy];
  const renamed = primary[10] as AlertPolicy;
  const doomed = primary[20] as AlertPolicy;
  const foreign = data.alerts.policies.find((p) => p.accountId === SECONDARY_ACCOUNT) as AlertPolicy;
  // The ids the next creates get, on both sides alike (each world hands out the next one).
  const nextId = Math.max(...data.alerts.policies.map((p) => p.id)) + 1;
  const list: Step[] = [];
  const add = (step: Step) => list.push(step);
  const get = (route: Route, name: string, path: string, headers?: Record<string, string>) => add({ route, name, method: 'GET', path, ...(headers && { headers }) });
  const create = (name: string, body: unknown, format = 'json', contentType = json) =>
    add({ route: 'alerts-policies.create', name, method: 'POST', path: `/v2/alerts_policies.${format}`, body: typeof body === 'string' ? body : JSON.stringify(body), contentType });
  const update = (name: string, id: number | string, body: unknown, format = 'json', contentType = json) =>
    add({ route: 'alerts-policies.update', name, method: 'PUT', path: `/v2/alerts_policies/${id}.${format}`, body: typeof body === 'string' ? body : JSON.stringify(body), contentType });
  const remove = (name: string, id: number | string, format = 'json') => add({ route: 'alerts-policies.delete', name, method: 'DELETE', path: `/v2/alerts_policies/${id}.${format}` });
  const listAll = (when: string) => {
    for (const page of [1, 2, 3, 4, 5]) get('alerts-policies.list', `page ${page} ${when}`, `/v2/alerts_policies.json?page=${page}`);
  };
  const byName = (name: string, extra = '') => `/v2/alerts_policies.json?filter[name]=${encodeURIComponent(name)}${extra}`;

  // ---- list: pages, formats, filter[name], accounts, errors
  listAll('as seeded');
  get('alerts-policies.list', 'no page', '/v2/alerts_policies.json');
  for (const page of [1, 3, 4]) get('alerts-policies.list', `xml page ${page}`, `/v2/alerts_policies.xml?page=${page}`);
  for (const policy of [first, second, third, renamed]) {
    get('alerts-policies.list', `filter[name] ${policy.name}`, byName(policy.name));
    get('alerts-policies.list', `filter[name] ${policy.name} (xml)`, byName(policy.name).replace('.json', '.xml'));
  }
  get('alerts-policies.list', 'filter[name] a prefix matches nothing', byName(renamed.name.slice(0, 5)));
  get('alerts-policies.list', 'filter[name] another case matches nothing', byName(renamed.name.toUpperCase()));
  get('alerts-policies.list', 'filter[name] with a trailing space matches nothing', byName(`${renamed.name} `));
  get('alerts-policies.list', 'filter[name] unknown', byName('No such policy'));
  get('alerts-policies.list', 'filter[name] blank is no filter', '/v2/alerts_policies.json?filter[name]=&page=2');
  get('alerts-policies.list', 'filter[name] page 2 of one match', byName(first.name, '&page=2'));
  get('alerts-policies.list', 'filter[name] too long', byName('n'.repeat(256)));
  get('alerts-policies.list', 'filter[name] of another account', byName(foreign.name));
  get('alerts-policies.list', 'filter[name] given twice (the last wins)', `${byName('No such policy')}&filter[name]=${encodeURIComponent(second.name)}`);
  get('alerts-policies.list', 'page 0', '/v2/alerts_policies.json?page=0');
  get('alerts-policies.list', 'page abc', '/v2/alerts_policies.json?page=abc');
  get('alerts-policies.list', 'a huge page', '/v2/alerts_policies.json?page=999999');
  get('alerts-policies.list', 'secondary account', '/v2/alerts_policies.json', { 'X-Api-Key': SECONDARY_KEY });
  get('alerts-policies.list', 'multi key pinned to the secondary account', '/v2/alerts_policies.json', { 'X-Api-Key': MULTI_KEY, 'X-Account-Id': String(SECONDARY_ACCOUNT) });
  get('alerts-policies.list', 'multi key pinned to the primary account', '/v2/alerts_policies.json?page=2', { 'X-Api-Key': MULTI_KEY, 'X-Account-Id': String(PRIMARY_ACCOUNT) });
  get('alerts-policies.list', 'Api-Key header', '/v2/alerts_policies.json?page=3', { 'Api-Key': DEMO_KEY });
  get('alerts-policies.list', 'api_key never echoed in Link', `/v2/alerts_policies.json?api_key=${DEMO_KEY}&page=2`);
  get('alerts-policies.list', 'missing key', '/v2/alerts_policies.json', {});
  get('alerts-policies.list', 'rejected key', '/v2/alerts_policies.json', { 'X-Api-Key': 'NRAK-NOT-A-KEY' });
  get('alerts-policies.list', 'account not allowed', '/v2/alerts_policies.json', { 'X-Api-Key': DEMO_KEY, 'X-Account-Id': String(SECONDARY_ACCOUNT) });
  add({ route: 'alerts-policies.list', name: 'PUT is 405 with Allow', method: 'PUT', path: '/v2/alerts_policies.json' });
  add({ route: 'alerts-policies.show', name: 'POST is 405 with Allow', method: 'POST', path: `/v2/alerts_policies/${first.id}.json` });

  // ---- show
  for (const policy of [first, second, third]) {
    get('alerts-policies.show', `policy ${policy.id}`, `/v2/alerts_policies/${policy.id}.json`);
    get('alerts-policies.show', `policy ${policy.id} (xml)`, `/v2/alerts_policies/${policy.id}.xml`);
  }
  get('alerts-policies.show', 'unknown id', '/v2/alerts_policies/1.json');
  get('alerts-policies.show', 'another account', `/v2/alerts_policies/${foreign.id}.json`);
  get('alerts-policies.show', 'another account, its own key', `/v2/alerts_policies/${foreign.id}.json`, { 'X-Api-Key': SECONDARY_KEY });
  get('alerts-policies.show', 'not numeric', '/v2/alerts_policies/abc.json');
  get('alerts-policies.show', 'zero', '/v2/alerts_policies/0.json');
  get('alerts-policies.show', 'negative', '/v2/alerts_policies/-5.json');
  get('alerts-policies.show', 'too long', `/v2/alerts_policies/${'9'.repeat(17)}.json`);
  get('alerts-policies.show', 'unknown id (xml)', '/v2/alerts_policies/1.xml');
  get('alerts-policies.show', 'rejected key', `/v2/alerts_policies/${first.id}.json`, { 'X-Api-Key': 'NRAK-NOT-A-KEY' });

  // ---- create
  create('name and incident_preference', { policy: { name: 'Differential one', incident_preference: 'PER_CONDITION' } });
  create('name only: PER_POLICY', { policy: { name: 'Differential two' } });
  create('name trimmed', { policy: { name: '   Differential three   ', incident_preference: 'PER_CONDITION_AND_TARGET' } });
  create('awkward name', { policy: { name: 'Ops "night" <pager> & O\'Brien\\x', incident_preference: 'PER_POLICY' } });
  create('same name again (v2 allowed it)', { policy: { name: 'Differential one' } });
  create('XML body, XML answer', '<policy><name>From XML</name><incident_preference>PER_CONDITION</incident_preference></policy>', 'xml', xml);
  create('form body', 'policy[name]=From+form&policy[incident_preference]=PER_CONDITION', 'json', form);
  create('extra fields ignored', { policy: { name: 'With extras', id: 5, created_at: 1 } });
  create('blank name', { policy: { name: '   ' } });
  create('no name', { policy: { incident_preference: 'PER_POLICY' } });
  create('null name', { policy: { name: null } });
  create('number name', { policy: { name: 42 } });
  create('name too long', { policy: { name: 'n'.repeat(256) } });
  create('name of 255 characters', { policy: { name: 'm'.repeat(255) } });
  create('bad incident_preference', { policy: { name: 'x', incident_preference: 'PER_ENTITY' } });
  create('lower-case incident_preference', { policy: { name: 'x', incident_preference: 'per_policy' } });
  create('null incident_preference', { policy: { name: 'x', incident_preference: null } });
  create('no wrapper', { name: 'x' });
  create('wrapper not an object', { policy: 'x' });
  create('empty body', '');
  create('broken JSON', '{"policy":');
  create('XML without the wrapper', '<name>x</name>', 'xml', xml);
  add({ route: 'alerts-policies.create', name: 'secondary account', method: 'POST', path: '/v2/alerts_policies.json', body: JSON.stringify({ policy: { name: 'Theirs' } }), contentType: json, headers: { 'X-Api-Key': SECONDARY_KEY } });
  add({ route: 'alerts-policies.create', name: 'rejected key', method: 'POST', path: '/v2/alerts_policies.json', body: JSON.stringify({ policy: { name: 'x' } }), contentType: json, headers: { 'X-Api-Key': 'NRAK-NOT-A-KEY' } });
  get('alerts-policies.list', 'find the first created', byName('Differential one'));
  get('alerts-policies.list', 'find the trimmed one', byName('Differential three'));
  get('alerts-policies.show', 'show the XML one', `/v2/alerts_policies/${nextId + 5}.json`);
  listAll('after the creates');

  // ---- update
  update('name', renamed.id, { policy: { name: 'Renamed by differential' } });
  update('incident_preference', renamed.id, { policy: { incident_preference: 'PER_CONDITION' } });
  update('both, name trimmed', second.id, { policy: { name: '  Second renamed ', incident_preference: 'PER_POLICY' } });
  update('nothing given', third.id, { policy: {} });
  update('a created one', nextId, { policy: { name: 'Differential one, renamed' } });
  update('XML', third.id, '<policy><incident_preference>PER_CONDITION_AND_TARGET</incident_preference></policy>', 'xml', xml);
  update('form', first.id, 'policy[name]=Form+renamed', 'json', form);
  update('blank name', renamed.id, { policy: { name: ' ' } });
  update('null name', renamed.id, { policy: { name: null } });
  update('name too long', renamed.id, { policy: { name: 'n'.repeat(256) } });
  update('bad incident_preference', renamed.id, { policy: { incident_preference: 'SOMETIMES' } });
  update('no wrapper', renamed.id, { name: 'x' });
  update('empty body', renamed.id, '');
  update('unknown id', 1, { policy: { name: 'x' } });
  update('unknown id, bad body', 1, { policy: { name: '' } });
  update('another account', foreign.id, { policy: { name: 'x' } });
  update('not numeric', 'abc', { policy: { name: 'x' } });
  get('alerts-policies.list', 'find the renamed one', byName('Renamed by differential'));
  get('alerts-policies.list', 'the old name finds nothing', byName(renamed.name));
  get('alerts-policies.show', 'show the renamed one', `/v2/alerts_policies/${renamed.id}.json`);

  // ---- delete
  remove('a seeded policy (with its conditions)', doomed.id);
  remove('it again', doomed.id);
  get('alerts-policies.show', 'the deleted one', `/v2/alerts_policies/${doomed.id}.json`);
  remove('a created one (xml)', nextId + 1, 'xml');
  remove('unknown id', 1);
  remove('another account', foreign.id);
  remove('not numeric', 'abc');
  remove('zero', 0);
  remove('unknown id (xml)', 1, 'xml');
  remove('the renamed created one', nextId);
  add({ route: 'alerts-policies.delete', name: 'another account, its own key', method: 'DELETE', path: `/v2/alerts_policies/${foreign.id}.json`, headers: { 'X-Api-Key': SECONDARY_KEY } });
  add({ route: 'alerts-policies.delete', name: 'rejected key', method: 'DELETE', path: `/v2/alerts_policies/${first.id}.json`, headers: { 'X-Api-Key': 'NRAK-NOT-A-KEY' } });
  get('alerts-policies.list', 'the deleted one by name', byName(doomed.name));
  listAll('after the deletes');
  return list;
}

/**
 * Allow is a set of methods (RFC 9110 §10.2.1 gives its order no meaning): each side lists its
 * own in its own order (the gateway in its mappings' order), so it is compared sorted.
 */
const allowAsASet: NonNullable<DifferentialCase['judge']> = (pair, standard) => {
  for (const answer of [pair.gateway, pair.legacy]) if (answer.allow) answer.allow = answer.allow.split(', ').sort().join(', ');
  return standard();
};

describeDifferential('differential alerts_policies: gateway == legacy face, answer for answer and state for state', { apmApps: 40, twin: true, tickMs: 1_000 }, (faces) => {
  it('answers every step alike', async () => {
    const all = steps(faces.legacy.data);
    const cases = all.map(({ headers, contentType, ...step }): DifferentialCase => ({
      ...step,
      headers: { ...(headers ?? { 'X-Api-Key': DEMO_KEY }), ...(contentType ? { 'content-type': contentType } : {}) },
      judge: allowAsASet,
    }));
    const report = await faces.expectAlike(cases);
    for (const route of ROUTES) expect(report.outcomes.filter((o) => o.case.route === route).length, route).toBeGreaterThanOrEqual(10);
    expect(report.statuses()).toEqual([200, 201, 400, 401, 403, 404, 405, 422]);
    for (const line of [
      'name and incident_preference: 201',
      'XML body, XML answer: 201',
      'form body: 201',
      "blank name: 422",
      'bad incident_preference: 422',
      'no wrapper: 400',
      'name: 200',
      'unknown id, bad body: 404',
      'a seeded policy (with its conditions): 200',
      'it again: 404',
      'filter[name] Checkout "golden signals": 200',
    ]) {
      expect(report.lines).toContain(line);
    }
  });

  it('leaves both worlds with the same policies and conditions', () => {
    const policies = (data: SandboxData) => data.alerts.policies.map(({ accountId, id, name, incidentPreference }) => ({ accountId, id, name, incidentPreference }));
    expect(policies(faces.upstream.data)).toEqual(policies(faces.legacy.data));
    const conditions = (data: SandboxData) => data.alerts.conditions.map((c) => `${c.accountId}/${c.policyId}/${c.id}`);
    expect(conditions(faces.upstream.data)).toEqual(conditions(faces.legacy.data));
    expect(faces.upstream.data.alerts.policies.some((p) => p.name === 'Renamed by differential')).toBe(true);
  });
});
