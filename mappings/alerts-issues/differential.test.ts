import { expect, it } from 'vitest';
import { TOPOLOGY_ID_PATHS } from '../../test/support/derived-ids.ts';
import { describeDifferential, type DifferentialCase } from '../../test/support/differential.ts';
import { DEMO_KEY, FIXED_NOW, MULTI_KEY, PRIMARY_ACCOUNT, SECONDARY_ACCOUNT, SECONDARY_KEY } from '../../test/support/harness.ts';

/**
 * alerts_violations, alerts_incidents (list, acknowledge, close): the gateway through one
 * sandbox's NerdGraph face equals a twin sandbox's legacy /v2 face (same seed, same clock),
 * request for request: status, content type, Link, body, with only the mappings' gap paths
 * removed. Two worlds, so each write runs once on each side and both stay alike.
 */
const demo = { 'X-Api-Key': DEMO_KEY };
const secondaryKey = { 'X-Api-Key': SECONDARY_KEY };
const iso = (ms: number): string => new Date(ms).toISOString().replace('.000', '');
const HOUR = 3_600_000;

function readCases(): DifferentialCase[] {
  const cases: DifferentialCase[] = [];
  const violations = (name: string, query: string, headers: Record<string, string> = demo, format = 'json') =>
    cases.push({ route: 'alerts-violations.list', name, path: `/v2/alerts_violations.${format}${query}`, headers });
  const incidents = (name: string, query: string, headers: Record<string, string> = demo, format = 'json') =>
    // The walk stops once it holds the page asked for: rel="last" only when it reached the end (a documented gap).
    cases.push({ route: 'alerts-incidents.list', name, path: `/v2/alerts_incidents.${format}${query}`, headers, lastMayBeMissing: true });
  for (const format of ['json', 'xml']) {
    for (const page of ['', '?page=1', '?page=2', '?page=3', '?page=5', '?page=7', '?page=40']) violations(`page ${page}`, page, demo, format);
    violations('only_open', '?only_open=true', demo, format);
    violations('only_open false, page 2', '?only_open=false&page=2', demo, format);
    violations('filter[only_open]', '?filter[only_open]=true', demo, format);
    violations('start_date', `?start_date=${iso(FIXED_NOW - 24 * HOUR)}`, demo, format);
    violations('start and end', `?start_date=${iso(FIXED_NOW - 72 * HOUR)}&end_date=${iso(FIXED_NOW - 24 * HOUR)}`, demo, format);
    violations('start and end, page 2', `?start_date=${iso(FIXED_NOW - 120 * HOUR)}&end_date=${iso(FIXED_NOW - 12 * HOUR)}&page=2`, demo, format);
    violations('filter[start_time]/filter[end_time]', `?filter[start_time]=${iso(FIXED_NOW - 48 * HOUR)}&filter[end_time]=${iso(FIXED_NOW - 6 * HOUR)}`, demo, format);
    violations('open in a window', `?only_open=1&start_date=${iso(FIXED_NOW - 6 * HOUR)}`, demo, format);
    violations('start in the future', `?start_date=${iso(FIXED_NOW + 48 * HOUR)}`, demo, format);
    violations('end only, long ago', `?end_date=2020-01-01T00:00:00Z`, demo, format);
    violations('date only', `?start_date=${iso(FIXED_NOW - 48 * HOUR).slice(0, 10)}`, demo, format);
    violations('secondary', '', secondaryKey, format);
    violations('multi pinned to secondary', '?page=1', { 'X-Api-Key': MULTI_KEY, 'X-Account-Id': String(SECONDARY_ACCOUNT) }, format);
    violations('bad only_open', '?only_open=maybe', demo, format);
    violations('bad start_date', '?start_date=yesterday', demo, format);
    violations('bad filter[end_time]', '?filter[end_time]=2026-13-01', demo, format);
    violations('end before start', `?start_date=${iso(FIXED_NOW - HOUR)}&end_date=${iso(FIXED_NOW - 2 * HOUR)}`, demo, format);
    violations('bad page', '?page=0', demo, format);
    violations('api_key never echoed', `?api_key=${DEMO_KEY}&page=2`, demo, format);
    violations('missing key', '', {}, format);
    violations('bad key', '', { 'X-Api-Key': 'NRAK-NOT-A-KEY' }, format);
    violations('account not allowed', '', { 'X-Api-Key': DEMO_KEY, 'X-Account-Id': String(SECONDARY_ACCOUNT) }, format);
    cases.push({ route: 'alerts-violations.list', name: 'POST is 405', path: `/v2/alerts_violations.${format}`, headers: demo, method: 'DELETE' });

    for (const page of ['', '?page=1', '?page=2', '?page=3', '?page=4', '?page=9']) incidents(`page ${page}`, page, demo, format);
    incidents('only_open', '?only_open=true', demo, format);
    incidents('only_open=false&page=1 (kenahrens)', '?only_open=false&page=1', demo, format);
    incidents('exclude_violations', '?exclude_violations=true', demo, format);
    incidents('exclude_violations page 3', '?exclude_violations=true&page=3', demo, format);
    incidents('both flags', '?only_open=true&exclude_violations=true', demo, format);
    incidents('secondary', '', secondaryKey, format);
    incidents('multi pinned to primary', '?page=2', { 'X-Api-Key': MULTI_KEY, 'X-Account-Id': String(PRIMARY_ACCOUNT) }, format);
    incidents('bad only_open', '?only_open=perhaps', demo, format);
    incidents('bad exclude_violations', '?exclude_violations=2', demo, format);
    incidents('bad page', '?page=abc', demo, format);
    incidents('missing key', '', {}, format);
    incidents('bad key', '', { 'X-Api-Key': 'nope' }, format);
  }
  return cases;
}

function writeCases(action: 'acknowledge' | 'close', openIds: Array<number | string>, closedIds: Array<number | string>): DifferentialCase[] {
  const cases: DifferentialCase[] = [];
  const route = `alerts-incidents.${action}`;
  const add = (name: string, id: string | number, format = 'json', headers: Record<string, string> = demo, method = 'PUT') =>
    cases.push({ route, name, path: `/v2/alerts_incidents/${id}/${action}.${format}`, headers, method });
  openIds.forEach((id, i) => add(`open ${id}`, id, i % 2 === 0 ? 'json' : 'xml'));
  // Again: acknowledging twice is fine, closing twice is 422.
  openIds.slice(0, 4).forEach((id) => add(`again ${id}`, id));
  closedIds.slice(0, 4).forEach((id, i) => add(`closed ${id}`, id, i % 2 === 0 ? 'json' : 'xml'));
  for (const format of ['json', 'xml']) {
    add('unknown id', 123456, format);
    add('non-numeric id', 'abc', format);
    add('zero', 0, format);
    add('huge', '99999999999999999999', format);
    add('missing key', openIds[0]!, format, {});
    add('bad key', openIds[0]!, format, { 'X-Api-Key': 'nope' });
    add('another account', openIds[0]!, format, secondaryKey);
    add('GET is 405', openIds[0]!, format, demo, 'GET');
  }
  return cases;
}

// Two worlds (same seed, same clock): each write runs once on each side. Incident, violation,
// event and deployment ids are each side's own (support/derived-ids.ts).
describeDifferential('differential: alerts_violations and alerts_incidents, gateway == legacy /v2', { apmApps: 300, twin: true, ids: TOPOLOGY_ID_PATHS }, (faces) => {
  /** The token of an id the legacy face showed. */
  const token = (legacyId: unknown): string => faces.legacyToken('alert', legacyId);
  const run = async (cases: DifferentialCase[]): Promise<number[]> => (await faces.expectAlike(cases)).statuses();

  it('reads: at least 30 requests per list route, several pages, every answer as v2 gave it', async () => {
    const cases = readCases();
    for (const route of ['alerts-violations.list', 'alerts-incidents.list']) expect(cases.filter((c) => c.route === route).length, route).toBeGreaterThanOrEqual(30);
    const first = await (await fetch(`${faces.legacyUrl}/v2/alerts_incidents.json?page=3`, { headers: demo })).json();
    expect((first as { incidents: unknown[] }).incidents.length).toBeGreaterThan(0);
    const statuses = await run(cases);
    expect(statuses).toEqual([200, 401, 403, 405, 422]);
  }, 180_000);

  it('alerts_events: at least 30 requests, filters and pages, every answer as v2 gave it', async () => {
    const all = ((await (await fetch(`${faces.legacyUrl}/v2/alerts_events.json`, { headers: demo })).json()) as { recent_events: Array<Record<string, unknown>> }).recent_events;
    const violation = all.find((event) => event.event_type === 'VIOLATION_CLOSE')!;
    const deployments = await (await fetch(`${faces.legacyUrl}/v2/alerts_events.json?filter[event_type]=DEPLOYMENT`, { headers: demo })).json();
    const deployment = (deployments as { recent_events: Array<Record<string, unknown>> }).recent_events[0]!;
    const cases: DifferentialCase[] = [];
    const add = (name: string, query: string, headers: Record<string, string> = demo, format = 'json') =>
      cases.push({ route: 'alerts-events.list', name, path: `/v2/alerts_events.${format}${query}`, headers });
    for (const format of ['json', 'xml']) {
      for (const page of ['', '?page=2', '?page=5', '?page=13', '?page=99']) add(`page ${page}`, page, demo, format);
      add('deployments', '?filter[event_type]=DEPLOYMENT', demo, format);
      add('violation opens, page 2', '?filter[event_type]=VIOLATION_OPEN&page=2', demo, format);
      add('violation closes', '?filter[event_type]=violation_close', demo, format);
      add('VIOLATION', '?filter[event_type]=VIOLATION&page=3', demo, format);
      add('NOTIFICATION: none', '?filter[event_type]=NOTIFICATION', demo, format);
      add('product BROWSER', '?filter[product]=BROWSER', demo, format);
      add('product mobile', '?filter[product]=mobile&page=2', demo, format);
      add('product SERVERS: none', '?filter[product]=SERVERS', demo, format);
      add('entity_type KeyTransaction', '?filter[entity_type]=KeyTransaction', demo, format);
      add('entity_type Application, deployments', '?filter[entity_type]=Application&filter[event_type]=DEPLOYMENT', demo, format);
      add('entity_id of a violation', `?filter[entity_id]=${violation.entity_id}`, demo, format);
      add('entity_group_id of a deployment', `?filter[entity_group_id]=${deployment.entity_group_id}`, demo, format);
      add('incident_id', `?filter[incident_id]=${token(violation.incident_id)}`, demo, format);
      add('incident_id and DEPLOYMENT: none', `?filter[incident_id]=${token(violation.incident_id)}&filter[event_type]=DEPLOYMENT`, demo, format);
      add('secondary', '', secondaryKey, format);
      add('bad product', '?filter[product]=NOPE', demo, format);
      add('bad entity_type', '?filter[entity_type]=Host', demo, format);
      add('bad entity_id', '?filter[entity_id]=abc', demo, format);
      add('bad event_type', '?filter[event_type]=ALERT', demo, format);
      add('bad incident_id', '?filter[incident_id]=-1', demo, format);
      add('bad page', '?page=x', demo, format);
      add('missing key', '', {}, format);
    }
    expect(cases.length).toBeGreaterThanOrEqual(30);
    const statuses = await run(cases);
    expect(statuses).toEqual([200, 401, 422]);
  }, 180_000);

  it.each(['acknowledge', 'close'] as const)('%s: at least 30 requests, each write once per side, answers alike', async (action) => {
    const list = async (query: string) =>
      ((await (await fetch(`${faces.legacyUrl}/v2/alerts_incidents.json${query}`, { headers: demo })).json()) as { incidents: Array<{ id: number; closed_at?: number }> }).incidents;
    const open = (await list('?only_open=true')).map((incident) => token(incident.id));
    const closed = (await list('?page=2')).filter((incident) => incident.closed_at !== undefined).map((incident) => token(incident.id));
    expect(open.length).toBeGreaterThanOrEqual(10);
    const ids = action === 'acknowledge' ? open.slice(0, 8) : open.slice(8, 16);
    const cases = writeCases(action, ids, closed);
    expect(cases.length).toBeGreaterThanOrEqual(30);
    const writesBefore = faces.upstream.writes().total;
    const statuses = await run(cases);
    expect(statuses).toEqual(expect.arrayContaining([200, 401, 404, 405, 422]));
    // Each id once; acknowledging again writes again (a fresh 200), closing again is refused.
    const expected = action === 'acknowledge' ? ids.length + 4 : ids.length;
    expect(faces.upstream.writes().total - writesBefore).toBe(expected);
    expect(faces.upstream.writes().nerdgraph).toEqual(expect.objectContaining({ [action === 'acknowledge' ? 'aiIssuesAckIssue' : 'aiIssuesResolveIssue']: expected }));
    // The two worlds agree after the writes too.
    await run(readCases().filter((c) => c.route === 'alerts-incidents.list').slice(0, 8));
  }, 180_000);
});
