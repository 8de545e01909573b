import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSandbox, type Sandbox } from '../../sandbox/server.ts';
import { DEMO_KEY, FIXED_NOW } from '../../test/support/harness.ts';
import { createModesGateway } from '../../test/support/modes.ts';

/**
 * In compare mode the legacy API executes a channel create and the translation only records
 * what it would have sent (a dry run): that record never holds the channel's secrets, which
 * NerdGraph takes as SecureValue inputs (src/upstream/recording-client.ts masks them).
 */
describe('channel create in compare mode', () => {
  let sandbox: Sandbox;
  let server: { url: string; close: () => Promise<void> };
  beforeAll(async () => {
    sandbox = createSandbox({ seed: 11, apmApps: 20, now: () => FIXED_NOW });
    server = await sandbox.listen(0, '127.0.0.1');
  });
  afterAll(async () => {
    await server?.close();
  });

  it.each([
    ['pagerduty', { service_key: 'dry-run-service-key' }, 'dry-run-service-key'],
    ['webhook', { base_url: 'https://h.example.com', auth_username: 'u', auth_password: 'dry-run-password' }, 'dry-run-password'],
  ])('%s: the dry-run record shows the secret as [secret]', async (type, configuration, secret) => {
    const gateway = await createModesGateway({ routes: 'real', nerdgraphUrl: `${server.url}/graphql`, legacyUrl: server.url, routeModes: '*=compare' });
    const response = await gateway.app.request('/v2/alerts_channels.json', {
      method: 'POST',
      headers: { 'x-api-key': DEMO_KEY, 'content-type': 'application/json' },
      body: JSON.stringify({ channel: { name: `dry ${type}`, type, configuration } }),
    });
    const text = await response.text();
    // Read to the end: the shadow work starts once the caller has the whole answer.
    expect(response.status, text).toBe(201);
        const records = await gateway.sink.waitForRecords(1);
    const record = records.at(-1);
    expect(record?.outcome).toBe('dry_run');
    const recorded = JSON.stringify(record?.dryRun);
    expect(recorded).toContain('ChannelDestinationCreate');
    expect(recorded).toContain('[secret]');
    expect(recorded).not.toContain(secret);
    expect(gateway.logs.join('\n')).not.toContain(secret);
  });
});
