import { expect, it } from 'vitest';
import { policyWorkflowName, channelV2Id } from './channel-config.ts';
import type { SandboxData } from '../../sandbox/model.ts';
import { notificationsOf } from '../../sandbox/notifications/store.ts';
import { legacyChannelId } from '../../sandbox/legacy/notifications.ts';
import { idToken, rememberingSide, type IdPath } from '../../test/support/derived-ids.ts';
import { describeDifferential, type DifferentialOptions, type Worlds } from '../../test/support/differential.ts';
import { DEMO_KEY, MULTI_KEY, PRIMARY_ACCOUNT, SECONDARY_ACCOUNT, SECONDARY_KEY } from '../../test/support/harness.ts';

/**
 * alerts_channels (list, create, delete) and alerts_policy_channels (PUT, DELETE),
 * differentially: two identical sandboxes on one clock. The same sequence of reads and writes
 * goes to the gateway (over the first sandbox's NerdGraph face) and to the second sandbox's
 * legacy /v2 face; every answer must match (status, content type, Link, body; only the
 * mappings' gap paths removed), and afterwards both worlds list the same channels.
 *
 * Channel ids are each side's own (the gateway derives them from NerdGraph's, the legacy face
 * hands out row ids in the order channels were made): requests name channels by their
 * NerdGraph id and answers are compared with ids put back to it (support/derived-ids.ts). Each
 * side lists by its own ids, so which channel lands on which page differs (a documented gap of
 * the list): pages are compared by status, Link and size, and the channels of a whole listing
 * (every page) as one set.
 */
interface Step {
  route: string;
  name: string;
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  path: string;
  headers: Record<string, string>;
  body?: string;
  /** A documented difference of status, [gateway, legacy]: the gateway's own bounds, which v2 did not have. */
  statusGap?: readonly [number, number];
  /** List pages read together: their channels are compared as one set. */
  listing?: string;
}

const LIST = 'alerts-channels.list';
const CREATE = 'alerts-channels.create';
const DELETE = 'alerts-channels.delete';
const LINK = 'alerts-policy-channels.update';
const UNLINK = 'alerts-policy-channels.delete';
const ROUTES = [LIST, CREATE, DELETE, LINK, UNLINK];

const demo = { 'X-Api-Key': DEMO_KEY };
const json = { ...demo, 'content-type': 'application/json' };
const xml = { ...demo, 'content-type': 'application/xml' };
const form = { ...demo, 'content-type': 'application/x-www-form-urlencoded' };
const secondary = { 'X-Api-Key': SECONDARY_KEY, 'content-type': 'application/json' };

const CHANNEL_IDS: readonly IdPath[] = [
  { path: 'channels[].id', kind: 'channel' },
  { path: 'channel.id', kind: 'channel' },
  { path: 'policy.channel_ids[]', kind: 'channel' },
];

const options: DifferentialOptions = {
  seed: 11,
  apmApps: 40,
  twin: true,
  tickMs: 1_000,
  ids: CHANNEL_IDS,
  prepare(worlds: Worlds) {
    // The scenario: the policies' own workflows were made through the gateway, so they carry the
    // gateway's name for them and it may edit them (it leaves workflows it did not make alone);
    // the sandbox names the workflows it seeds its own way.
    for (const world of [worlds.upstream, worlds.legacy]) {
      for (const workflow of notificationsOf(world.data).workflows) {
        const [only] = workflow.predicates;
        if (workflow.predicates.length === 1 && only?.attribute === 'labels.policyIds' && only.values.length === 1) workflow.name = policyWorkflowName(Number(only.values[0]));
      }
    }
  },
  /** Each side's channel ids by NerdGraph channel id: the gateway's derived ones, the legacy face's own. */
  sides: ({ upstream, legacy }) => ({
    gateway: rememberingSide({ channel: () => notificationsOf(upstream.data).channels.map((c) => [c.id, channelV2Id(c.id)] as const) }),
    legacy: rememberingSide({ channel: () => notificationsOf(legacy.data).channels.map((c) => [c.id, legacyChannelId(legacy.data, c.id) as number] as const) }),
  }),
};

function corpus(data: SandboxData): Step[] {
  const store = notificationsOf(data);
  const v2Types = new Set(['EMAIL', 'SLACK_LEGACY', 'WEBHOOK', 'PAGERDUTY_SERVICE_INTEGRATION', 'MOBILE_PUSH']);
  const mine = (accountId: number) => store.channels.filter((c) => c.accountId === accountId && v2Types.has(c.type));
  const primaryChannels = mine(PRIMARY_ACCOUNT);
  const secondaryChannels = mine(SECONDARY_ACCOUNT);
  const token = (channelId: string | undefined) => idToken('channel', channelId ?? 'missing');
  const idOf = (type: string, nth = 0, list = primaryChannels) => token(list.filter((c) => c.type === type)[nth]?.id);
  const policies = data.alerts.policies.filter((p) => p.accountId === PRIMARY_ACCOUNT);
  const secondaryPolicy = data.alerts.policies.find((p) => p.accountId === SECONDARY_ACCOUNT)?.id as number;
  const bound = new Set(store.workflows.flatMap((w) => w.predicates.flatMap((p) => (p.attribute === 'labels.policyIds' ? p.values.map(Number) : []))));
  const withWorkflow = policies.filter((p) => bound.has(p.id)).map((p) => p.id);
  const without = policies.filter((p) => !bound.has(p.id)).map((p) => p.id);
  // A workflow with 2+ channels (unlink keeps it) and one with a single channel (unlink deletes it).
  const policyWorkflow = (id: number) => store.workflows.find((w) => w.predicates.length === 1 && w.predicates[0]?.values[0] === String(id));
  const multi = withWorkflow.find((id) => (policyWorkflow(id)?.channelIds.length ?? 0) >= 2) as number;
  const single = withWorkflow.find((id) => policyWorkflow(id)?.channelIds.length === 1) as number;
  const multiChannels = (policyWorkflow(multi)?.channelIds ?? []).map(token);
  const singleChannel = token(policyWorkflow(single)?.channelIds[0]);
  const otherAccountChannel = token(secondaryChannels[0]?.id);

  const steps: Step[] = [];
  const add = (route: string, name: string, method: Step['method'], path: string, headers: Record<string, string> = demo, body?: string, extra: Partial<Step> = {}) =>
    steps.push({ route, name, method, path, headers, ...(body === undefined ? {} : { body }), ...extra });
  const listAll = (label: string) => {
    for (const page of ['', '?page=2', '?page=3', '?page=4']) add(LIST, `${label} ${page}`, 'GET', `/v2/alerts_channels.json${page}`, demo, undefined, { listing: label });
  };
  const create = (name: string, channel: unknown, query = '', headers: Record<string, string> = json, extra: Partial<Step> = {}) =>
    add(CREATE, name, 'POST', `/v2/alerts_channels.json${query}`, headers, JSON.stringify({ channel }), extra);
  // Refusals each face words on its own (a type or a link with no place in a NerdGraph world; v2's words are UNCONFIRMED): statuses only
  // here; the gateway's exact titles are checked in upstream.test.ts.
  const ownWords = { statusGap: [422, 422] } as const;

  // ---- list: pages, formats, keys, errors
  for (const format of ['json', 'xml']) {
    const path = `/v2/alerts_channels.${format}`;
    for (const page of ['', '?page=2', '?page=3', '?page=4', '?page=5', '?page=40']) add(LIST, `demo ${format} ${page}`, 'GET', `${path}${page}`, demo, undefined, { listing: `demo ${format}` });
    add(LIST, `demo ${format} ?page=1`, 'GET', `${path}?page=1`);
    add(LIST, 'Api-Key header', 'GET', `${path}?page=2`, { 'Api-Key': DEMO_KEY });
    add(LIST, 'secondary', 'GET', path, { 'X-Api-Key': SECONDARY_KEY });
    add(LIST, 'multi pinned to secondary', 'GET', path, { 'X-Api-Key': MULTI_KEY, 'X-Account-Id': String(SECONDARY_ACCOUNT) });
    add(LIST, 'multi pinned to primary', 'GET', `${path}?page=3`, { 'X-Api-Key': MULTI_KEY, 'X-Account-Id': String(PRIMARY_ACCOUNT) });
    add(LIST, 'bad page', 'GET', `${path}?page=0`);
    add(LIST, 'bad page text', 'GET', `${path}?page=abc`);
    add(LIST, 'api_key never echoed', 'GET', `${path}?api_key=${DEMO_KEY}&page=2`);
    add(LIST, 'missing key', 'GET', path, {});
    add(LIST, 'bad key', 'GET', path, { 'X-Api-Key': 'NRAK-NOT-A-KEY' });
    add(LIST, 'account not allowed', 'GET', path, { 'X-Api-Key': DEMO_KEY, 'X-Account-Id': String(SECONDARY_ACCOUNT) });
    add(LIST, 'PUT is 405 with Allow', 'PUT', path);
    add(LINK, 'GET is 405 with Allow', 'GET', `/v2/alerts_policy_channels.${format}?policy_id=1&channel_ids=1`);
    add(DELETE, 'GET of one channel is 405 with Allow', 'GET', `/v2/alerts_channels/1.${format}`);
  }

  // ---- create
  create('email', { name: 'Ops mail', type: 'email', configuration: { recipients: 'ops@example.com, dev@example.com', include_json_attachment: true } });
  create('email without attachment flag', { name: 'Plain mail', type: 'email', configuration: { recipients: 'a@example.com' } });
  create('slack', { name: 'Slack room', type: 'slack', configuration: { url: 'https://hooks.slack.com/services/T1/B1/x', channel: '#ops' } });
  create('slack without channel', { name: 'Slack bare', type: 'slack', configuration: { url: 'https://hooks.slack.com/services/T1/B1/y' } });
  create('pagerduty', { name: 'PD', type: 'pagerduty', configuration: { service_key: 'pd-key-created' } });
  create('webhook with auth, objects', {
    name: 'Hook',
    type: 'webhook',
    configuration: { base_url: 'https://hooks.example.com/x', auth_username: 'bob', auth_password: 'hook-password-created', payload_type: 'application/json', payload: { a: '$ACCOUNT_ID' }, headers: { 'X-A': 1 } },
  });
  create('webhook plain', { name: 'Hook 2', type: 'webhook', configuration: { base_url: 'http://hooks.example.com/y', payload: '{"b":1}' } });
  create('user', { name: 'Me', type: 'user', configuration: { user_id: 2680539 } });
  create('email linked to a policy without workflow', { name: 'Linked', type: 'email', configuration: { recipients: 'l@example.com' } }, `?policy_ids=${without[0]}`);
  create('slack linked to two policies', { name: 'Linked 2', type: 'slack', configuration: { url: 'https://hooks.slack.com/services/T/B/z' } }, `?policy_ids=${withWorkflow[0]},${without[1]}`);
  create('policy_ids[] spelling', { name: 'Linked 3', type: 'webhook', configuration: { base_url: 'https://a.example.com' } }, `?policy_ids[]=${withWorkflow[1]}`);
  create('unknown policy', { name: 'x', type: 'email', configuration: { recipients: 'x@example.com' } }, '?policy_ids=1');
  create('policy of another account', { name: 'x', type: 'email', configuration: { recipients: 'x@example.com' } }, `?policy_ids=${secondaryPolicy}`);
  create('bad policy_ids', { name: 'x', type: 'email', configuration: { recipients: 'x@example.com' } }, '?policy_ids=abc');
  // The gateway's bound (10 policies per create); v2 had none: the legacy face reads on and
  // stops at the unknown last policy, so neither world changes.
  add(CREATE, 'too many policy_ids', 'POST', `/v2/alerts_channels.json?policy_ids=${[...policies.slice(0, 10).map((p) => p.id), 1].join(',')}`, json, JSON.stringify({ channel: { name: 'x', type: 'email', configuration: { recipients: 'x@example.com' } } }), { statusGap: [422, 404] });
  create('user with policy_ids', { name: 'x', type: 'user', configuration: { user_id: '5' } }, `?policy_ids=${without[0]}`, json, ownWords);
  create('opsgenie', { name: 'x', type: 'opsgenie', configuration: { api_key: 'k', teams: 't' } }, '', json, ownWords);
  create('victorops', { name: 'x', type: 'victorops', configuration: { key: 'k', route_key: 'r' } }, '', json, ownWords);
  create('unknown type', { name: 'x', type: 'campfire', configuration: {} });
  create('type missing', { name: 'x', configuration: {} });
  create('blank name', { name: '  ', type: 'email', configuration: { recipients: 'x@example.com' } });
  create('long name', { name: 'n'.repeat(256), type: 'email', configuration: { recipients: 'x@example.com' } });
  create('no configuration', { name: 'x', type: 'email' });
  create('bad recipients', { name: 'x', type: 'email', configuration: { recipients: 'not an address' } });
  create('bad attachment flag', { name: 'x', type: 'email', configuration: { recipients: 'x@example.com', include_json_attachment: 'maybe' } });
  create('slack bad url', { name: 'x', type: 'slack', configuration: { url: 'ftp://nope' } });
  create('pagerduty without key', { name: 'x', type: 'pagerduty', configuration: {} });
  create('webhook password without user', { name: 'x', type: 'webhook', configuration: { base_url: 'https://a.example.com', auth_password: 'p' } });
  create('webhook bad payload type', { name: 'x', type: 'webhook', configuration: { base_url: 'https://a.example.com', payload_type: 'text/plain' } });
  create('user bad id', { name: 'x', type: 'user', configuration: { user_id: 'me' } });
  create('configuration value not text', { name: 'x', type: 'slack', configuration: { url: 'https://a.example.com', channel: ['a'] } });
  add(CREATE, 'no wrapper', 'POST', '/v2/alerts_channels.json', json, JSON.stringify({ name: 'x' }));
  add(CREATE, 'broken JSON', 'POST', '/v2/alerts_channels.json', json, '{"channel":');
  add(CREATE, 'XML body', 'POST', '/v2/alerts_channels.xml', xml, '<channel><name>From XML</name><type>email</type><configuration><recipients>xml@example.com</recipients><include_json_attachment>true</include_json_attachment></configuration></channel>');
  add(CREATE, 'form body', 'POST', '/v2/alerts_channels.json', form, 'channel[name]=From+form&channel[type]=slack&channel[configuration][url]=https%3A%2F%2Fhooks.slack.com%2Fx');
  create('secondary account', { name: 'Theirs', type: 'email', configuration: { recipients: 's@example.com' } }, '', secondary);
  create('bad key', { name: 'x', type: 'email', configuration: { recipients: 'x@example.com' } }, '', { 'X-Api-Key': 'NRAK-NOT-A-KEY', 'content-type': 'application/json' });
  listAll('after creates');

  // ---- policy channels PUT
  const link = (name: string, query: string, headers: Record<string, string> = demo, format = 'json') => add(LINK, name, 'PUT', `/v2/alerts_policy_channels.${format}${query}`, headers);
  link('one channel, policy without workflow', `?policy_id=${without[2]}&channel_ids=${idOf('EMAIL', 3)}`);
  link('same again (nothing to write)', `?policy_id=${without[2]}&channel_ids=${idOf('EMAIL', 3)}`);
  link('two more to that workflow', `?policy_id=${without[2]}&channel_ids=${idOf('WEBHOOK', 1)},${idOf('SLACK_LEGACY', 2)}`);
  link('to a policy with a workflow', `?policy_id=${multi}&channel_ids=${idOf('PAGERDUTY_SERVICE_INTEGRATION', 1)}`);
  link('already linked', `?policy_id=${multi}&channel_ids=${multiChannels.join(',')}`);
  link('mixed linked and new', `?policy_id=${single}&channel_ids=${singleChannel},${idOf('EMAIL', 5)}`);
  link('channel_ids[] spelling', `?policy_id=${without[3]}&channel_ids[]=${idOf('EMAIL', 6)}&channel_ids[]=${idOf('EMAIL', 7)}`);
  link('xml', `?policy_id=${without[4]}&channel_ids=${idOf('SLACK_LEGACY', 3)}`, demo, 'xml');
  link('unknown policy', `?policy_id=1&channel_ids=${idOf('EMAIL', 3)}`);
  link('policy of another account', `?policy_id=${secondaryPolicy}&channel_ids=${idOf('EMAIL', 3)}`);
  link('unknown channel', `?policy_id=${without[2]}&channel_ids=123`);
  link('channel of another account', `?policy_id=${without[2]}&channel_ids=${otherAccountChannel}`);
  add(LINK, 'user channel', 'PUT', `/v2/alerts_policy_channels.json?policy_id=${without[2]}&channel_ids=${idOf('MOBILE_PUSH', 0)}`, demo, undefined, ownWords);
  link('missing policy_id', `?channel_ids=${idOf('EMAIL', 3)}`);
  link('blank policy_id', `?policy_id=&channel_ids=${idOf('EMAIL', 3)}`);
  link('bad policy_id', `?policy_id=abc&channel_ids=${idOf('EMAIL', 3)}`);
  link('two policy ids', `?policy_id=1,2&channel_ids=${idOf('EMAIL', 3)}`);
  link('missing channel_ids', `?policy_id=${without[2]}`);
  link('empty channel_ids', `?policy_id=${without[2]}&channel_ids=`);
  link('bad channel_ids', `?policy_id=${without[2]}&channel_ids=1,x`);
  // The gateway's bound (100 channels per request); v2 had none: the legacy face finds no channel 1.
  add(LINK, 'too many channel_ids', 'PUT', `/v2/alerts_policy_channels.json?policy_id=${without[2]}&channel_ids=${Array.from({ length: 101 }, (_, i) => i + 1).join(',')}`, demo, undefined, { statusGap: [422, 404] });
  link('secondary key, own policy and channel', `?policy_id=${secondaryPolicy}&channel_ids=${otherAccountChannel}`, { 'X-Api-Key': SECONDARY_KEY });
  link('bad key', `?policy_id=${without[2]}&channel_ids=${idOf('EMAIL', 3)}`, { 'X-Api-Key': 'NRAK-NOT-A-KEY' });
  link('missing key', `?policy_id=${without[2]}&channel_ids=${idOf('EMAIL', 3)}`, {});
  for (let i = 0; i < 6; i++) link(`link seeded ${i}`, `?policy_id=${withWorkflow[2 + i]}&channel_ids=${idOf('EMAIL', 10 + i)}`);
  listAll('after links');

  // ---- policy channels DELETE
  const unlink = (name: string, query: string, headers: Record<string, string> = demo, format = 'json') => add(UNLINK, name, 'DELETE', `/v2/alerts_policy_channels.${format}${query}`, headers);
  unlink('one of several', `?policy_id=${multi}&channel_id=${multiChannels[0]}`);
  unlink('again: not linked any more', `?policy_id=${multi}&channel_id=${multiChannels[0]}`);
  unlink('the last one (workflow deleted)', `?policy_id=${without[2]}&channel_id=${idOf('EMAIL', 3)}`);
  unlink('xml', `?policy_id=${without[2]}&channel_id=${idOf('WEBHOOK', 1)}`, demo, 'xml');
  unlink('never linked', `?policy_id=${without[5]}&channel_id=${idOf('EMAIL', 8)}`);
  unlink('unknown policy', `?policy_id=1&channel_id=${idOf('EMAIL', 8)}`);
  unlink('unknown channel', `?policy_id=${multi}&channel_id=123`);
  unlink('channel of another account', `?policy_id=${multi}&channel_id=${otherAccountChannel}`);
  unlink('missing policy_id', `?channel_id=${idOf('EMAIL', 8)}`);
  unlink('missing channel_id', `?policy_id=${multi}`);
  unlink('bad channel_id', `?policy_id=${multi}&channel_id=x`);
  unlink('bad policy_id', `?policy_id=-1&channel_id=${idOf('EMAIL', 8)}`);
  unlink('two channel ids', `?policy_id=${multi}&channel_id=1,2`);
  unlink('bad key', `?policy_id=${multi}&channel_id=${multiChannels[1]}`, { 'X-Api-Key': 'NRAK-NOT-A-KEY' });
  unlink('secondary key', `?policy_id=${secondaryPolicy}&channel_id=${otherAccountChannel}`, { 'X-Api-Key': SECONDARY_KEY });
  unlink('secondary key, primary policy', `?policy_id=${multi}&channel_id=${multiChannels[1]}`, { 'X-Api-Key': SECONDARY_KEY });
  for (let i = 0; i < 8; i++) {
    const policy = withWorkflow[8 + i] as number;
    const channel = policyWorkflow(policy)?.channelIds[0];
    if (channel) unlink(`unlink seeded ${i}`, `?policy_id=${policy}&channel_id=${token(channel)}`);
  }
  for (let i = 0; i < 6; i++) unlink(`unlink linked ${i}`, `?policy_id=${withWorkflow[2 + i]}&channel_id=${idOf('EMAIL', 10 + i)}`);
  listAll('after unlinks');

  // ---- delete
  const del = (name: string, id: number | string, headers: Record<string, string> = demo, format = 'json') => add(DELETE, name, 'DELETE', `/v2/alerts_channels/${id}.${format}`, headers);
  const linkedChannel = token(policyWorkflow(withWorkflow[20] as number)?.channelIds[0]);
  del('a channel linked to policies', linkedChannel);
  del('again', linkedChannel);
  for (const type of ['EMAIL', 'SLACK_LEGACY', 'WEBHOOK', 'PAGERDUTY_SERVICE_INTEGRATION', 'MOBILE_PUSH']) {
    del(`seeded ${type}`, idOf(type, 20));
    del(`seeded ${type} (xml)`, idOf(type, 21), demo, 'xml');
  }
  del('unknown', 123);
  del('non-numeric', 'abc');
  del('zero', 0);
  del('huge', '99999999999999999999');
  del('another account\'s channel', otherAccountChannel);
  del('another account\'s channel, their key', otherAccountChannel, { 'X-Api-Key': SECONDARY_KEY });
  del('bad key', idOf('EMAIL', 22), { 'X-Api-Key': 'NRAK-NOT-A-KEY' });
  del('missing key', idOf('EMAIL', 22), {});
  del('account not allowed', idOf('EMAIL', 22), { 'X-Api-Key': DEMO_KEY, 'X-Account-Id': String(SECONDARY_ACCOUNT) });
  del('multi pinned to primary', idOf('EMAIL', 23), { 'X-Api-Key': MULTI_KEY, 'X-Account-Id': String(PRIMARY_ACCOUNT) });
  for (let i = 24; i < 34; i++) del(`seeded email ${i}`, idOf('EMAIL', i));
  listAll('after deletes');
  return steps;
}

describeDifferential('differential: alerts_channels and alerts_policy_channels, gateway == legacy /v2, answer for answer and state for state', options, (faces) => {
  it('answers every step alike, with at least 30 requests per route', async () => {
    const steps = corpus(faces.legacy.data);
    // Each side lists by its own ids: list pages are compared by shape, their channels as one set per listing.
    const report = await faces.expectAlike(steps.map((step) => ({ ...step, ...(step.route === LIST && { listKey: 'channels' }) })));
    for (const route of ROUTES) {
      const count = steps.filter((step) => step.route === route).length;
      console.info(`differential corpus ${route}: ${count} requests, statuses ${report.statuses(route).join(',')}`);
      expect(count, route).toBeGreaterThanOrEqual(30);
    }
    expect(report.statuses(CREATE)).toEqual(expect.arrayContaining([201, 400, 401, 404, 422]));
    expect(report.statuses(LINK)).toEqual(expect.arrayContaining([200, 401, 404, 422]));
    expect(report.statuses(UNLINK)).toEqual(expect.arrayContaining([200, 401, 404, 422]));
    expect(report.statuses(DELETE)).toEqual(expect.arrayContaining([200, 401, 403, 404]));
    // Both worlds hold the same workflows' channel links and the same channels.
    const links = (data: SandboxData) =>
      notificationsOf(data)
        // Workflow names are each side's own choice for the workflows it makes.
        .workflows.map((w) => `${w.accountId} ${w.predicates.map((p) => p.values.join('|')).join(';')} ${[...w.channelIds].sort().join(',')}`)
        .sort();
    expect(links(faces.upstream.data)).toEqual(links(faces.legacy.data));
    const channelIds = (data: SandboxData) => notificationsOf(data).channels.map((c) => c.id).sort();
    expect(channelIds(faces.upstream.data)).toEqual(channelIds(faces.legacy.data));
  }, 240_000);

  it('never logs a secret sent in a configuration', () => {
    const logs = faces.gateway.logs.join('\n');
    for (const secret of ['pd-key-created', 'hook-password-created']) expect(logs).not.toContain(secret);
  });
});
