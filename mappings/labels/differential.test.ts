import { expect, it } from 'vitest';
import type { SandboxApp, SandboxData } from '../../sandbox/model.ts';
import { LabelTitles } from './label-rules.ts';
import { describeDifferential, type DifferentialCase } from '../../test/support/differential.ts';
import { DEMO_KEY, PRIMARY_ACCOUNT, SECONDARY_ACCOUNT, SECONDARY_KEY } from '../../test/support/harness.ts';

/**
 * Labels, differentially: two identical sandboxes on one clock. The same sequence of label
 * reads and writes goes to the gateway (over the first sandbox's NerdGraph face, as tags) and
 * to the second sandbox's legacy /v2 face. Every answer must match bar the paths the label
 * mappings declare as gaps, and afterwards both worlds must hold the same labels.
 */
interface Step {
  name: string;
  method: 'GET' | 'PUT' | 'DELETE';
  path: string;
  body?: string;
  contentType?: string;
  key?: string;
  /** A documented difference of status (a known gap of the mapping): [gateway, legacy]. */
  statusGap?: readonly [number, number];
}

const json = 'application/json';
const xml = 'application/xml';
const form = 'application/x-www-form-urlencoded';
const put = (label: unknown): string => JSON.stringify({ label });

function steps(data: SandboxData): Step[] {
  const primary = data.apps.filter((a) => a.accountId === PRIMARY_ACCOUNT);
  const [a, b, c, d, e, f, g, h] = primary as [SandboxApp, SandboxApp, SandboxApp, SandboxApp, SandboxApp, SandboxApp, SandboxApp, SandboxApp];
  const foreign = data.apps.find((app) => app.accountId === SECONDARY_ACCOUNT) as SandboxApp;
  const production = primary.filter((app) => app.userTags?.Environment?.includes('Production'));
  const notProduction = primary.find((app) => !app.userTags?.Environment?.includes('Production')) as SandboxApp;
  const list: Step[] = [];
  const add = (step: Step) => list.push(step);
  const listAll = (when: string) => {
    for (const page of [1, 2, 3]) add({ name: `list page ${page} ${when}`, method: 'GET', path: `/v2/labels.json?page=${page}` });
  };

  listAll('as seeded');
  add({ name: 'list (no page)', method: 'GET', path: '/v2/labels.json' });
  add({ name: 'list page 2 (xml)', method: 'GET', path: '/v2/labels.xml?page=2' });
  add({ name: 'list past the end', method: 'GET', path: '/v2/labels.json?page=9' });
  add({ name: 'list: page 0', method: 'GET', path: '/v2/labels.json?page=0' });
  add({ name: 'list: page abc', method: 'GET', path: '/v2/labels.json?page=abc' });
  add({ name: 'list (secondary account)', method: 'GET', path: '/v2/labels.json', key: SECONDARY_KEY });
  add({ name: 'HEAD-less list with a form of filters ignored', method: 'GET', path: '/v2/labels.json?page=1&filter[name]=x' });
  for (const page of [1, 2, 3]) add({ name: `list page ${page} (xml)`, method: 'GET', path: `/v2/labels.xml?page=${page}` });
  add({ name: 'list page 2 (secondary account)', method: 'GET', path: '/v2/labels.json?page=2', key: SECONDARY_KEY });
  add({ name: 'list: page -1', method: 'GET', path: '/v2/labels.json?page=-1' });
  add({ name: 'list: page 1.5', method: 'GET', path: '/v2/labels.json?page=1.5' });
  add({ name: 'list: a huge page', method: 'GET', path: '/v2/labels.json?page=999999' });
  add({ name: 'list: page given twice', method: 'GET', path: '/v2/labels.json?page=2&page=3' });
  add({ name: 'list: a rejected key', method: 'GET', path: '/v2/labels.json', key: 'NRAK-NOT-A-KEY' });
  add({ name: 'list: a rejected key (xml)', method: 'GET', path: '/v2/labels.xml', key: 'NRAK-NOT-A-KEY' });
  add({ name: 'list: an unknown format', method: 'GET', path: '/v2/labels.yaml' });
  add({ name: 'list page 3 (secondary account, past its end)', method: 'GET', path: '/v2/labels.xml?page=3', key: SECONDARY_KEY });
  add({ name: 'list: page with a plus sign', method: 'GET', path: '/v2/labels.json?page=%2B2' });

  add({ name: 'PUT (JSON, two apps)', method: 'PUT', path: '/v2/labels.json', body: put({ category: 'Owner', name: 'Jane Doe', links: { applications: [a.id, b.id] } }), contentType: json });
  add({ name: 'PUT (XML)', method: 'PUT', path: '/v2/labels.xml', body: `<label><category>Cost Center</category><name>CC-42</name><links><applications>${c.id}</applications></links></label>`, contentType: xml });
  add({ name: 'PUT (form)', method: 'PUT', path: '/v2/labels.json', body: `label[category]=Owner&label[name]=Ops&label[links][applications][]=${c.id}&label[links][applications][]=${d.id}`, contentType: form });
  add({ name: 'PUT (XML, Rails list)', method: 'PUT', path: '/v2/labels.xml', body: `<?xml version="1.0"?><label><category>Owner</category><name>Rails</name><links><applications type="array"><application type="integer">${a.id}</application><application type="integer">${c.id}</application></applications><servers type="array"/></links></label>`, contentType: xml });
  add({ name: 'PUT an existing label on one more app', method: 'PUT', path: '/v2/labels.json', body: put({ category: 'Environment', name: 'Production', links: { applications: [notProduction.id], servers: [] } }), contentType: json });
  add({ name: 'PUT where it is already applied', method: 'PUT', path: '/v2/labels.json', body: put({ category: 'Owner', name: 'Jane Doe', links: { applications: [a.id] } }), contentType: json });
  add({ name: 'PUT with ids as text and repeated', method: 'PUT', path: '/v2/labels.json', body: put({ category: 'Language', name: 'Java', links: { applications: [String(d.id), d.id] } }), contentType: json });
  add({ name: 'PUT: no wrapper', method: 'PUT', path: '/v2/labels.json', body: JSON.stringify({ category: 'x', name: 'y' }), contentType: json });
  add({ name: 'PUT: no category', method: 'PUT', path: '/v2/labels.json', body: put({ name: 'y', links: { applications: [a.id] } }), contentType: json });
  add({ name: 'PUT: blank name', method: 'PUT', path: '/v2/labels.json', body: put({ category: 'x', name: '  ', links: { applications: [a.id] } }), contentType: json });
  add({ name: 'PUT: colon in category', method: 'PUT', path: '/v2/labels.json', body: put({ category: 'a:b', name: 'y', links: { applications: [a.id] } }), contentType: json });
  add({ name: 'PUT: category too long', method: 'PUT', path: '/v2/labels.json', body: put({ category: 'c'.repeat(129), name: 'y', links: { applications: [a.id] } }), contentType: json });
  add({ name: 'PUT: name too long', method: 'PUT', path: '/v2/labels.json', body: put({ category: 'x', name: 'n'.repeat(257), links: { applications: [a.id] } }), contentType: json });
  add({ name: 'PUT: a system tag key', method: 'PUT', path: '/v2/labels.json', body: put({ category: 'language', name: 'cobol', links: { applications: [a.id] } }), contentType: json });
  add({ name: 'PUT: servers', method: 'PUT', path: '/v2/labels.json', body: put({ category: 'x', name: 'y', links: { applications: [a.id], servers: [12345] } }), contentType: json });
  add({ name: 'PUT: applications not ids', method: 'PUT', path: '/v2/labels.json', body: put({ category: 'x', name: 'y', links: { applications: ['abc'] } }), contentType: json });
  add({ name: 'PUT: category not text', method: 'PUT', path: '/v2/labels.json', body: put({ category: { a: 1 }, name: 'y', links: { applications: [a.id] } }), contentType: json });
  add({ name: 'PUT: unknown application', method: 'PUT', path: '/v2/labels.json', body: put({ category: 'x', name: 'y', links: { applications: [a.id, 123] } }), contentType: json });
  add({ name: 'PUT: another account\'s application', method: 'PUT', path: '/v2/labels.json', body: put({ category: 'x', name: 'y', links: { applications: [foreign.id] } }), contentType: json });
  add({ name: 'PUT: broken JSON', method: 'PUT', path: '/v2/labels.json', body: '{"label":', contentType: json });
  add({ name: 'PUT: applications as a JSON object (Rails XML rule is XML only)', method: 'PUT', path: '/v2/labels.json', body: put({ category: 'x', name: 'y', links: { applications: { x: a.id } } }), contentType: json });
  add({ name: 'PUT: applications as one JSON number', method: 'PUT', path: '/v2/labels.json', body: put({ category: 'x', name: 'y', links: { applications: a.id } }), contentType: json });
  add({ name: 'PUT: form with applications= and applications[]=', method: 'PUT', path: '/v2/labels.json', body: `label[category]=F&label[name]=I&label[links][applications]=${a.id}&label[links][applications][]=${b.id}`, contentType: form });
  add({ name: 'PUT: XML list of one (Rails rule)', method: 'PUT', path: '/v2/labels.xml', body: `<label><category>Owner</category><name>One</name><links><applications type="array"><application>${d.id}</application></applications></links></label>`, contentType: xml });
  // The gateway's bound (25 applications per request, a documented gap): v2 had none, so the
  // legacy face applies it; taking it off again on the legacy side leaves the worlds equal.
  add({ name: 'PUT: 26 applications (over the bound)', method: 'PUT', path: '/v2/labels.json', body: put({ category: 'Bulk', name: 'TwentySix', links: { applications: primary.slice(0, 26).map((app) => app.id) } }), contentType: json, statusGap: [422, 200] });
  add({ name: 'DELETE the 26-application label (only the legacy side has it)', method: 'DELETE', path: '/v2/labels/Bulk:TwentySix.json', statusGap: [404, 200] });
  add({ name: 'PUT: no applications (documented gap)', method: 'PUT', path: '/v2/labels.json', body: put({ category: 'Empty', name: 'Label' }), contentType: json, statusGap: [422, 200] });
  add({ name: 'PUT a new label on three apps', method: 'PUT', path: '/v2/labels.json', body: put({ category: 'Squad', name: 'Blue', links: { applications: [e.id, f.id, g.id] } }), contentType: json });
  add({ name: 'PUT a second value of that category', method: 'PUT', path: '/v2/labels.json', body: put({ category: 'Squad', name: 'Green', links: { applications: [g.id, h.id] } }), contentType: json });
  add({ name: 'PUT (form, one app)', method: 'PUT', path: '/v2/labels.json', body: `label[category]=Squad&label[name]=Red&label[links][applications][]=${h.id}`, contentType: form });
  add({ name: 'PUT (XML, two apps, comma list)', method: 'PUT', path: '/v2/labels.xml', body: `<label><category>Squad</category><name>Gold</name><links><applications>${e.id},${f.id}</applications></links></label>`, contentType: xml });
  add({ name: 'PUT: a rejected key', method: 'PUT', path: '/v2/labels.json', body: put({ category: 'Squad', name: 'Nope', links: { applications: [e.id] } }), contentType: json, key: 'NRAK-NOT-A-KEY' });
  add({ name: 'PUT: broken XML', method: 'PUT', path: '/v2/labels.xml', body: '<label><category>x</category>', contentType: xml });
  add({ name: 'PUT: the secondary key on its own app', method: 'PUT', path: '/v2/labels.json', body: put({ category: 'Squad', name: 'Far', links: { applications: [foreign.id] } }), contentType: json, key: SECONDARY_KEY });
  listAll('after the PUTs');

  add({ name: 'DELETE from one app', method: 'DELETE', path: '/v2/labels/Owner:Jane%20Doe.json', body: put({ links: { applications: [a.id] } }), contentType: json });
  add({ name: 'DELETE: unknown app in the body', method: 'DELETE', path: '/v2/labels/Owner:Ops.json', body: put({ links: { applications: [123] } }), contentType: json });
  add({ name: 'DELETE an app that does not carry it', method: 'DELETE', path: '/v2/labels/Owner:Ops.json', body: put({ links: { applications: [a.id] } }), contentType: json });
  add({ name: 'DELETE the whole label', method: 'DELETE', path: '/v2/labels/Owner:Jane%20Doe.json' });
  add({ name: 'DELETE it again', method: 'DELETE', path: '/v2/labels/Owner:Jane%20Doe.json' });
  add({ name: 'DELETE (xml, encoded colon)', method: 'DELETE', path: '/v2/labels/Cost%20Center%3ACC-42.xml' });
  add({ name: 'DELETE a seeded label from two apps (form)', method: 'DELETE', path: '/v2/labels/Environment:Production.json', body: `label[links][applications][]=${production[0]?.id}&label[links][applications][]=${production[1]?.id}`, contentType: form });
  add({ name: 'DELETE: no colon', method: 'DELETE', path: '/v2/labels/Production.json' });
  add({ name: 'DELETE: bad escape', method: 'DELETE', path: '/v2/labels/Team:%E0%A4%A.json' });
  add({ name: 'DELETE: unknown label', method: 'DELETE', path: '/v2/labels/Team:Nobody.json' });
  // System tags are no labels (GET never lists them): 404, nothing sent.
  add({ name: 'DELETE: a system tag (language:java)', method: 'DELETE', path: '/v2/labels/language:java.json' });
  add({ name: 'DELETE: a system tag from named apps', method: 'DELETE', path: '/v2/labels/language:java.json', body: put({ links: { applications: [a.id] } }), contentType: json });
  add({ name: 'DELETE: an account tag', method: 'DELETE', path: `/v2/labels/account:${encodeURIComponent(`Account ${PRIMARY_ACCOUNT}`)}.json` });
  add({ name: 'DELETE: an nr.* tag', method: 'DELETE', path: '/v2/labels/nr.alertingPolicy:1.json' });
  add({ name: 'DELETE: named apps as a JSON object', method: 'DELETE', path: '/v2/labels/Owner:Ops.json', body: put({ links: { applications: { x: c.id } } }), contentType: json });
  add({ name: 'DELETE: servers', method: 'DELETE', path: '/v2/labels/Owner:Ops.json', body: put({ links: { servers: [1] } }), contentType: json });
  add({ name: 'GET on a label key (not a v2 route method)', method: 'GET', path: '/v2/labels/Owner:Ops.json' });
  add({ name: 'DELETE Squad:Blue from one app (xml body)', method: 'DELETE', path: '/v2/labels/Squad:Blue.xml', body: `<label><links><applications>${e.id}</applications></links></label>`, contentType: xml });
  add({ name: 'DELETE Squad:Blue from two apps (json)', method: 'DELETE', path: '/v2/labels/Squad:Blue.json', body: put({ links: { applications: [f.id, g.id] } }), contentType: json });
  add({ name: 'DELETE Squad:Blue again (no app carries it)', method: 'DELETE', path: '/v2/labels/Squad:Blue.json' });
  add({ name: 'DELETE Squad:Green whole (two apps)', method: 'DELETE', path: '/v2/labels/Squad:Green.json' });
  add({ name: 'DELETE Squad:Red (form body)', method: 'DELETE', path: '/v2/labels/Squad:Red.json', body: `label[links][applications][]=${h.id}`, contentType: form });
  add({ name: 'DELETE Squad:Gold whole (xml)', method: 'DELETE', path: '/v2/labels/Squad:Gold.xml' });
  add({ name: 'DELETE: a rejected key', method: 'DELETE', path: '/v2/labels/Owner:Ops.json', key: 'NRAK-NOT-A-KEY' });
  add({ name: 'DELETE: the secondary key on its own label', method: 'DELETE', path: '/v2/labels/Squad:Far.json', key: SECONDARY_KEY });
  add({ name: 'DELETE: the secondary key on a primary label', method: 'DELETE', path: '/v2/labels/Owner:Ops.json', key: SECONDARY_KEY });
  add({ name: 'DELETE: an empty category', method: 'DELETE', path: '/v2/labels/:Ops.json' });
  add({ name: 'DELETE: an empty name', method: 'DELETE', path: '/v2/labels/Owner:.json' });
  add({ name: 'DELETE: broken JSON body', method: 'DELETE', path: '/v2/labels/Owner:Ops.json', body: '{"label":', contentType: json });
  add({ name: 'DELETE: an unknown app among named ones', method: 'DELETE', path: '/v2/labels/Owner:Ops.json', body: put({ links: { applications: [c.id, 123] } }), contentType: json });
  add({ name: 'DELETE: an unknown format', method: 'DELETE', path: '/v2/labels/Owner:Ops.yaml' });
  listAll('after the DELETEs');
  add({ name: 'list page 3 (xml) at the end', method: 'GET', path: '/v2/labels.xml?page=3' });
  return list;
}

// Each request a second later on both sides.
describeDifferential('differential labels: gateway == legacy face, answer for answer and state for state', { apmApps: 450, twin: true, tickMs: 1_000 }, (faces) => {
  it('answers every step alike (30+ requests)', async () => {
    const all = steps(faces.legacy.data);
    // The bar: 30 or more requests for each translated route (list, PUT, DELETE).
    for (const method of ['GET', 'PUT', 'DELETE'] as const) expect(all.filter((step) => step.method === method).length, method).toBeGreaterThanOrEqual(30);
    const gaps = ['labels.list', 'labels.create', 'labels.delete'].flatMap((route) => faces.gapsOf(route));
    const cases = all.map(({ key, contentType, ...step }): DifferentialCase => ({
      ...step,
      headers: { 'X-Api-Key': key ?? DEMO_KEY, ...(contentType ? { 'content-type': contentType } : {}) },
      gaps,
    }));
    const report = await faces.expectAlike(cases);
    expect(report.statuses()).toEqual([200, 400, 401, 404, 405, 422]);
    for (const line of [
      'PUT (JSON, two apps): 200',
      'DELETE the whole label: 200',
      'PUT (XML, Rails list): 200',
      'PUT (form): 200',
      'DELETE it again: 404',
      'DELETE: a system tag (language:java): 404',
      'DELETE: a system tag from named apps: 404',
      'DELETE: an account tag: 404',
      'DELETE: an nr.* tag: 404',
      'DELETE: named apps as a JSON object: 422',
      'PUT: applications as a JSON object (Rails XML rule is XML only): 422',
      'PUT: applications as one JSON number: 422',
      'PUT: form with applications= and applications[]=: 400',
      'PUT: XML list of one (Rails rule): 200',
    ]) {
      expect(report.lines).toContain(line);
    }
  });

  it('leaves both worlds with the same labels', () => {
    const labels = (data: SandboxData) => data.apps.map((app) => ({ id: app.id, tags: app.userTags ?? {} }));
    expect(labels(faces.upstream.data)).toEqual(labels(faces.legacy.data));
    const [a] = faces.upstream.data.apps.filter((app) => app.accountId === PRIMARY_ACCOUNT) as [SandboxApp];
    // Jane Doe came and went; the Rails-style XML PUT stayed.
    expect(a.userTags?.Owner).toEqual(['Rails']);
  });

  it('pages the seeded labels over 3+ pages with v2 Link headers', async () => {
    const response = await faces.gateway.app.request('/v2/labels.json', { headers: { 'X-Api-Key': DEMO_KEY } });
    expect(response.headers.get('link')).toMatch(/page=3>; rel="last"/);
    const body = (await response.json()) as { labels: Array<{ key: string; category: string; name: string; links: { applications: number[]; servers: number[] } }> };
    expect(body.labels).toHaveLength(20);
    for (const label of body.labels) {
      expect(label.key).toBe(`${label.category}:${label.name}`);
      expect(label.links.servers).toEqual([]);
      expect(label.links.applications.length).toBeGreaterThan(0);
      // System tags are never labels.
      expect(['account', 'language']).not.toContain(label.category);
    }
  });

  it('says why a label without applications is refused', async () => {
    const response = await faces.gateway.app.request('/v2/labels.json', {
      method: 'PUT',
      headers: { 'X-Api-Key': DEMO_KEY, 'content-type': json },
      body: put({ category: 'Empty', name: 'Label', links: { applications: [] } }),
    });
    expect(response.status).toBe(422);
    expect(await response.json()).toEqual({ error: { title: LabelTitles.noApplications } });
  });
});
