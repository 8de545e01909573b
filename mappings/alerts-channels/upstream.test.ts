import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { notificationsOf } from '../../sandbox/notifications/store.ts';
import { json, startFakeUpstream, type FakeRequest, forwardTo } from '../../test/support/fake-upstream.ts';
import { DEMO_KEY, PRIMARY_ACCOUNT, createTestGateway, startSandbox, type TestGateway } from '../../test/support/harness.ts';
import { ChannelTitles, PolicyChannelTitles, channelV2Id } from './channel-config.ts';

/**
 * What the channel translation sends NerdGraph and how it reads NerdGraph's answers, beyond
 * what the differential corpus shows: secrets only as secure inputs and never in answers,
 * refusals before any mutation, NerdGraph's own refusals and NOT_FOUND, and links through a
 * workflow shared by several policies. A stand-in forwards to the sandbox unless a test
 * overrides an operation.
 */
let sandbox: Awaited<ReturnType<typeof startSandbox>>;
let upstream: Awaited<ReturnType<typeof startFakeUpstream>>;
let gateway: TestGateway;
let override: ((request: FakeRequest) => unknown) | undefined;

beforeAll(async () => {
  sandbox = await startSandbox({ apmApps: 20 });
  upstream = await startFakeUpstream(async (request, res) => {
    const canned = override?.(request);
    if (canned !== undefined) return json(res, 200, canned);
    await forwardTo(sandbox.graphqlUrl, request, res);
  });
  gateway = await createTestGateway({ nerdgraphUrl: upstream.url });
});
afterAll(async () => {
  await upstream.close();
  await sandbox.close();
});
beforeEach(() => {
  override = undefined;
  upstream.received.length = 0;
});

const headers = { 'x-api-key': DEMO_KEY, 'content-type': 'application/json' };
const send = async (method: string, path: string, body?: unknown) => {
  const response = await gateway.app.request(path, { method, headers, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> & { error?: { title: string } } };
};
const mutations = () => upstream.received.filter((r) => /^\s*(#[^\n]*\n\s*)*mutation/.test(r.query)).map((r) => r.operationName);

describe('alerts_channels translation against NerdGraph', () => {
  it('sends secrets only as the destination\'s secure credentials and answers them as null', async () => {
    const pd = await send('POST', '/v2/alerts_channels.json', { channel: { name: 'PD secret', type: 'pagerduty', configuration: { service_key: 'svc-secret-1' } } });
    expect(pd.status).toBe(201);
    expect(pd.body.channels).toEqual([expect.objectContaining({ type: 'pagerduty', configuration: { service_key: null } })]);
    const destination = upstream.received.find((r) => r.operationName === 'ChannelDestinationCreate')?.variables.destination as Record<string, unknown>;
    expect(destination.auth).toEqual({ type: 'TOKEN', token: { token: 'svc-secret-1' } });
    expect(JSON.stringify(destination.properties)).not.toContain('svc-secret-1');
    expect(mutations()).toEqual(['ChannelDestinationCreate', 'ChannelCreate']);
    const hook = await send('POST', '/v2/alerts_channels.json', {
      channel: { name: 'Hook secret', type: 'webhook', configuration: { base_url: 'https://h.example.com', auth_username: 'ann', auth_password: 'pw-secret-2' } },
    });
    expect(hook.status).toBe(201);
    expect((hook.body.channels as Array<{ configuration: Record<string, unknown> }>)[0]?.configuration).toMatchObject({ auth_username: 'ann', auth_password: null });
    expect(gateway.logs.join('\n')).not.toMatch(/svc-secret-1|pw-secret-2/);
  });

  it('refuses opsgenie and victorops before sending anything', async () => {
    for (const type of ['opsgenie', 'victorops']) {
      const answer = await send('POST', '/v2/alerts_channels.json', { channel: { name: 'x', type, configuration: { api_key: 'k' } } });
      expect(answer.status).toBe(422);
      expect(answer.body.error?.title).toBe(ChannelTitles.noEquivalent(type));
    }
    expect(mutations()).toEqual([]);
  });

  it('refuses a user channel for a policy, in a create and a link, with the title saying why, before sending anything', async () => {
    const policy = sandbox.sandbox.data.alerts.policies.find((p) => p.accountId === PRIMARY_ACCOUNT);
    const push = notificationsOf(sandbox.sandbox.data).channels.find((c) => c.accountId === PRIMARY_ACCOUNT && c.type === 'MOBILE_PUSH');
    if (!policy || !push) throw new Error('no policy or mobile push channel in the sandbox');
    const created = await send('POST', `/v2/alerts_channels.json?policy_ids=${policy.id}`, { channel: { name: 'x', type: 'user', configuration: { user_id: '5' } } });
    expect(created).toEqual({ status: 422, body: { error: { title: PolicyChannelTitles.pushNotRoutable } } });
    const linked = await send('PUT', `/v2/alerts_policy_channels.json?policy_id=${policy.id}&channel_ids=${channelV2Id(push.id)}`);
    expect(linked).toEqual({ status: 422, body: { error: { title: PolicyChannelTitles.pushNotRoutable } } });
    expect(PolicyChannelTitles.pushNotRoutable).toBe(
      'Invalid parameter channel_ids: user (mobile push) channels cannot be linked to a policy since the REST v2 end of life: NerdGraph workflows cannot route to them',
    );
    expect(mutations()).toEqual([]);
  });

  it('answers NerdGraph\'s NOT_FOUND for a policy as v2\'s policy 404', async () => {
    override = (request) =>
      request.operationName === 'NotificationDirectory' && request.variables.withPolicy === true
        ? { data: null, errors: [{ message: 'Policy not found', extensions: { errorClass: 'NOT_FOUND' } }] }
        : undefined;
    const channel = notificationsOf(sandbox.sandbox.data).channels.find((c) => c.accountId === PRIMARY_ACCOUNT && c.type === 'EMAIL');
    const answer = await send('PUT', `/v2/alerts_policy_channels.json?policy_id=100001&channel_ids=${channelV2Id(channel?.id ?? '')}`);
    expect(answer.status).toBe(404);
    expect(answer.body.error?.title).toBe(ChannelTitles.policyNotFound);
    expect(mutations()).toEqual([]);
  });

  it('answers NerdGraph\'s refusal to delete a channel as a 422 naming it, nothing deleted', async () => {
    override = (request) =>
      request.operationName === 'ChannelDelete' ? { data: { aiNotificationsDeleteChannel: { ids: null, error: { description: 'Channel is used by a workflow', type: 'ENTITY_IN_USE' } } } } : undefined;
    const channel = notificationsOf(sandbox.sandbox.data).channels.find((c) => c.accountId === PRIMARY_ACCOUNT && c.type === 'SLACK_LEGACY');
    const answer = await send('DELETE', `/v2/alerts_channels/${channelV2Id(channel?.id ?? '')}.json`);
    expect(answer.status).toBe(422);
    expect(answer.body.error?.title).toContain('ENTITY_IN_USE');
    expect(notificationsOf(sandbox.sandbox.data).channels).toContain(channel);
  });

  it('shows links made by a workflow shared by several policies, and refuses to unlink through it', async () => {
    const store = notificationsOf(sandbox.sandbox.data);
    const channel = store.channels.filter((c) => c.accountId === PRIMARY_ACCOUNT && c.type === 'WEBHOOK')[2];
    if (!channel) throw new Error('no webhook channel');
    store.workflows.push({
      accountId: PRIMARY_ACCOUNT,
      id: 'shared-workflow',
      name: 'shared',
      enabled: true,
      channelIds: [channel.id],
      filterId: 'shared-filter',
      filterName: 'shared',
      predicates: [{ attribute: 'labels.policyIds', operator: 'EXACTLY_MATCHES', values: ['100150', '100151'] }],
      mutingRulesHandling: 'NOTIFY_ALL_ISSUES',
      createdAt: 0,
      updatedAt: 0,
    });
    const id = channelV2Id(channel.id);
    let shown: { links: { policy_ids: number[] } } | undefined;
    for (let page = 1; page <= 4 && !shown; page++) {
      const list = await send('GET', `/v2/alerts_channels.json?page=${page}`);
      shown = (list.body.channels as Array<{ id: number; links: { policy_ids: number[] } }>).find((c) => c.id === id);
    }
    expect(shown?.links.policy_ids).toEqual(expect.arrayContaining([100150, 100151]));
    const answer = await send('DELETE', `/v2/alerts_policy_channels.json?policy_id=100150&channel_id=${id}`);
    expect(answer.status).toBe(422);
    expect(answer.body.error?.title).toBe(PolicyChannelTitles.sharedWorkflow);
    expect(mutations()).toEqual([]);
  });
});
