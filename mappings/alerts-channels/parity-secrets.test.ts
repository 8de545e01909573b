import { Writable } from 'node:stream';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/ops/config.ts';
import { compareAnswers } from '../../src/compare/diff.ts';
import { isSecretPath, maskSecrets, maskTargetSecrets } from '../../src/compare/secrets.ts';
import type { AnswerSnapshot } from '../../src/compare/types.ts';
import { buildGateway, type BuiltGateway } from '../../src/gateway.ts';
import { createLogger } from '../../src/ops/logger.ts';
import { notificationsOf } from '../../sandbox/notifications/store.ts';

/**
 * Secrets a caller puts in an alert channel (PagerDuty service_key, webhook auth_password,
 * headers, payload) never reach what the comparing modes keep: the parity records, the report,
 * /bridge/parity.json, the /bridge/ page, the logs. In compare mode the legacy API echoes them
 * on every channel list; in candidate mode the legacy side records the write's request body.
 */
const DEMO_KEY = 'NRAK-SANDBOX-DEMO';
const FROM_LOOPBACK = { incoming: { socket: { remoteAddress: '127.0.0.1' } } };

const secretsOf = (tag: string) => ({
  serviceKey: `PDKEY${tag}7a1f`,
  password: `PWSECRET${tag}93c2`,
  header: `HDRSECRET${tag}5be0`,
  payload: `PAYLOADSECRET${tag}11d4`,
  unparsed: `UNPARSED${tag}c0de`,
});

async function gatewayIn(mode: 'compare' | 'candidate'): Promise<{ gateway: BuiltGateway; logs: string[] }> {
  const logs: string[] = [];
  const config = loadConfig({
    ...process.env,
    ROUTE_MODES: `*=${mode}`,
    SANDBOX_DIVERGE: '',
    SANDBOX_LEGACY_JITTER: 'false',
    COMPARE_SAMPLE_RATE: '1',
    COMPARE_MAX_LOOP_UTILISATION: '1',
    NERDGRAPH_URL: '',
    NEW_RELIC_REGION: '',
    LEGACY_REST_URL: '',
    LOG_LEVEL: 'debug',
  });
  const frozen = Date.now();
  const logger = createLogger('debug', new Writable({ write: (chunk: Buffer, _e, done) => (logs.push(chunk.toString('utf8')), done()) }));
  return { gateway: await buildGateway(config, { logger, now: () => frozen }), logs };
}

async function settled(gateway: BuiltGateway, expected: number): Promise<void> {
  for (let waited = 0; waited < 20_000; waited += 25) {
    const { outcomes } = gateway.store.report({ recent: 0 }).totals;
    if (Object.values(outcomes).reduce((sum, n) => sum + n, 0) >= expected) return;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error('the comparisons did not finish');
}

async function send(gateway: BuiltGateway, method: string, path: string, body?: string, contentType = 'application/json'): Promise<Response> {
  const response = await gateway.app.request(path, { method, headers: { 'x-api-key': DEMO_KEY, ...(body === undefined ? {} : { 'content-type': contentType }) }, ...(body === undefined ? {} : { body }) });
  await response.arrayBuffer();
  return response;
}

/** Creates the channels, lists every page, sends a channel body that does not parse; the number of comparisons started. */
async function traffic(gateway: BuiltGateway, secret: ReturnType<typeof secretsOf>): Promise<number> {
  let compared = 0;
  const pagerduty = await send(gateway, 'POST', '/v2/alerts_channels.json', JSON.stringify({ channel: { name: 'pd parity', type: 'pagerduty', configuration: { service_key: secret.serviceKey } } }));
  expect(pagerduty.status).toBe(201);
  compared++;
  const webhook = await send(
    gateway,
    'POST',
    '/v2/alerts_channels.json',
    JSON.stringify({
      channel: {
        name: 'hook parity',
        type: 'webhook',
        configuration: {
          base_url: 'https://hooks.example.com/in',
          auth_username: 'hook-user',
          auth_password: secret.password,
          headers: { Authorization: `Bearer ${secret.header}` },
          payload: { token: secret.payload },
          payload_type: 'application/json',
        },
      },
    }),
  );
  expect(webhook.status).toBe(201);
  compared++;
  const form = await send(gateway, 'POST', '/v2/alerts_channels.json', `channel[name]=pd form&channel[type]=pagerduty&channel[configuration][service_key]=${secret.serviceKey}F`, 'application/x-www-form-urlencoded');
  expect(form.status).toBe(201);
  compared++;
  const broken = await send(gateway, 'POST', '/v2/alerts_channels.json', `{"channel": {"type": "pagerduty", "configuration": {"service_key": "${secret.unparsed}"`);
  expect(broken.status).toBeGreaterThanOrEqual(400);
  compared++;
  for (let page = 1; page <= 6; page++) {
    const list = await gateway.app.request(`/v2/alerts_channels.json?page=${page}`, { headers: { 'x-api-key': DEMO_KEY } });
    const body = (await list.json()) as { channels: unknown[] };
    compared++;
    if (body.channels.length === 0) break;
  }
  return compared;
}

async function everythingKept(gateway: BuiltGateway, logs: string[]): Promise<string> {
  const json = await gateway.app.request('/bridge/parity.json?recent=1000', {}, FROM_LOOPBACK);
  expect(json.status).toBe(200);
  const page = await gateway.app.request('/bridge/', {}, FROM_LOOPBACK);
  expect(page.status).toBe(200);
  return [JSON.stringify(gateway.store.report({ recent: 1000 })), await json.text(), await page.text(), logs.join('\n')].join('\n');
}

describe.each(['compare', 'candidate'] as const)('channel secrets in %s mode', (mode) => {
  const secret = secretsOf(mode.toUpperCase());
  let gateway: BuiltGateway;
  let kept: string;
  beforeAll(async () => {
    const built = await gatewayIn(mode);
    gateway = built.gateway;
    const compared = await traffic(gateway, secret);
    await settled(gateway, compared);
    kept = await everythingKept(gateway, built.logs);
  }, 60_000);
  afterAll(async () => {
    await gateway?.close();
  });

  it('no record, report, page or log line holds a secret the caller sent', () => {
    for (const value of Object.values(secret)) expect(kept, value).not.toContain(value);
  });

  it('nor any secret the legacy API echoed (every credential the sandbox store holds)', () => {
    const data = gateway.sandbox?.sandbox.data;
    if (!data) throw new Error('no embedded sandbox');
    const stored = notificationsOf(data).destinations.flatMap((destination) => (destination.auth === null ? [] : destination.auth.type === 'TOKEN' ? [destination.auth.token] : [destination.auth.password]));
    expect(stored.length).toBeGreaterThan(5);
    for (const value of stored) expect(kept, value).not.toContain(value);
  });

  it('the records still show where secrets were, masked', () => {
    expect(kept).toContain('[secret');
    const report = gateway.store.report({ recent: 1000 });
    expect(report.recent.length).toBeGreaterThan(0);
  });

  it('an unparsable channel body is recorded without any of its text', () => {
    if (mode !== 'candidate') return;
    const report = gateway.store.report({ recent: 1000 });
    const unparsed = report.recent.flatMap((record) => record.dryRun?.calls ?? []).filter((call) => 'unparsedBody' in call.variables);
    expect(unparsed.length).toBe(1);
    expect(String(unparsed[0]?.variables.unparsedBody)).toMatch(/^\[not kept: \d+ bytes that did not parse\]$/);
  });
});

describe('compareAnswers on channel answers', () => {
  const snap = (body: unknown): AnswerSnapshot => ({ status: 200, contentType: 'application/json', link: null, ms: 1, body: JSON.stringify(body) });
  const legacy = { channels: [{ id: 5, name: 'PD', type: 'pagerduty', configuration: { service_key: 'SECRET-PD-KEY-1' }, links: { policy_ids: [] } }] };
  const translated = { channels: [{ id: 5, name: 'PD', type: 'pagerduty', configuration: { service_key: null }, links: { policy_ids: [] } }] };
  const rules = { gapPatterns: ['channels[].configuration.service_key'], thresholds: [] };

  it('keeps no secret in a difference at the secret or around it (a whole channel missing)', () => {
    const atSecret = compareAnswers({ legacy: snap(legacy), translated: snap(translated), rules });
    expect(atSecret.differences.map((d) => d.path)).toEqual(['channels[id=5].configuration.service_key']);
    const moved = compareAnswers({ legacy: snap(legacy), translated: snap({ channels: [{ ...translated.channels[0], id: 77 }] }), rules });
    for (const result of [atSecret, moved]) expect(JSON.stringify(result)).not.toContain('SECRET-PD-KEY-1');
  });

  it('still tells equal secrets from different ones', () => {
    expect(compareAnswers({ legacy: snap(legacy), translated: snap(legacy), rules }).outcome).toBe('match');
    const other = { channels: [{ ...legacy.channels[0], configuration: { service_key: 'SECRET-PD-KEY-2' } }] };
    expect(compareAnswers({ legacy: snap(legacy), translated: snap(other), rules }).differences).toHaveLength(1);
  });
});

describe('maskSecrets', () => {
  it('masks configuration secrets and secret property pairs, keeps equal secrets equal and different ones different', () => {
    const a = maskSecrets({ channel: { configuration: { service_key: 's1', url: 'https://x', headers: '{"a":1}', key: 'k' } }, properties: [{ key: 'headers', value: 'h' }, { key: 'url', value: 'u' }] });
    const b = maskSecrets({ channel: { configuration: { service_key: 's1' } } });
    const c = maskSecrets({ channel: { configuration: { service_key: 's2', auth_password: null } } });
    // A Slack webhook URL is itself a credential: masked too, as a destination's url property.
    for (const masked of [a.channel.configuration.service_key, a.channel.configuration.headers, a.channel.configuration.key, a.channel.configuration.url, a.properties[0]?.value, a.properties[1]?.value]) {
      expect(String(masked)).toMatch(/^\[secret [0-9a-f]{8}\]$/);
    }
    expect(b.channel.configuration.service_key).toBe(a.channel.configuration.service_key);
    expect(c.channel.configuration.service_key).not.toBe(a.channel.configuration.service_key);
    expect(c.channel.configuration.auth_password).toBeNull();
    // A label's key is not a secret: only a configuration's `key` is.
    expect(maskSecrets({ label: { key: 'Team:Checkout' } }).label.key).toBe('Team:Checkout');
  });

  it('never leaves a secret string anywhere in a masked configuration (property)', () => {
    fc.assert(
      fc.property(fc.constantFrom('service_key', 'auth_password', 'api_key', 'key', 'headers', 'payload'), fc.string({ minLength: 12 }), fc.jsonValue(), (key, text, around) => {
        const secret = `S3CR3T${text}`;
        const masked = maskSecrets({ around, deep: [{ configuration: { [key]: secret } }] });
        expect(JSON.stringify(masked)).not.toContain(JSON.stringify(secret).slice(1, -1));
      }),
    );
  });

  it('knows secret difference paths', () => {
    expect(isSecretPath('channels[id=5].configuration.service_key')).toBe(true);
    expect(isSecretPath('channel.configuration.headers')).toBe(true);
    expect(isSecretPath('channels[].configuration.auth_password')).toBe(true);
    expect(isSecretPath('channels[].configuration.base_url')).toBe(false);
    expect(isSecretPath('labels[].key')).toBe(false);
  });
});

describe('secrets of older channel types, and in a request target', () => {
  it('masks HipChat, Campfire and VictorOps credentials and a Slack URL inside a configuration', () => {
    const masked = maskSecrets({ configuration: { auth_token: 'HC-SECRET', token: 'CF-SECRET', route_key: 'VO-SECRET', url: 'https://hooks.slack.com/services/T0/B0/SECRET', channel: '#ops' } }) as {
      configuration: Record<string, string>;
    };
    expect(JSON.stringify(masked)).not.toMatch(/HC-SECRET|CF-SECRET|VO-SECRET|services\/T0/);
    expect(masked.configuration.channel).toBe('#ops');
  });

  it('masks secret parameters of a request target and keeps the others as sent', () => {
    const target = '/v2/alerts_channels.json?channel[configuration][service_key]=PD-SECRET&channel%5Bconfiguration%5D%5Bauth_password%5D=PW-SECRET&policy_ids[]=7&page=2';
    const masked = maskTargetSecrets(target);
    expect(masked).not.toMatch(/PD-SECRET|PW-SECRET/);
    expect(masked.startsWith('/v2/alerts_channels.json?')).toBe(true);
    expect(masked).toContain('policy_ids[]=7&page=2');
    expect(maskTargetSecrets('/v2/applications.json?filter[name]=a')).toBe('/v2/applications.json?filter[name]=a');
  });
});
