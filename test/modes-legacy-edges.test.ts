import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createModesGateway, startLegacyServer } from './support/modes.ts';

/**
 * The legacy side's edges (issue 19): what is sent to it besides the key (the gateway's own
 * request id, no header that carries the key in any encoding).
 */
const KEY = 'NRAK-LEGACYEDGES7Q2W9E4R6T8Y1U3I';
// Never called: the translation side fails fast where it runs at all.
const NO_NERDGRAPH = 'http://127.0.0.1:9/graphql';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('what the legacy API is sent besides the key', () => {
  let legacy: Awaited<ReturnType<typeof startLegacyServer>>;
  beforeAll(async () => {
    legacy = await startLegacyServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"application":{"id":1}}');
    });
  });
  afterAll(() => legacy.close());

  /** The key, disguised as clients disguise it, in each forwarded header it could be pasted into. */
  const disguised = {
    'x-request-id': Buffer.from(KEY).toString('base64url'),
    'user-agent': `curl/8.5.0 (${Buffer.from(KEY.toLowerCase()).toString('hex').toUpperCase()})`,
    'if-none-match': `W/"${Buffer.from(KEY).toString('base64')}"`,
    accept: `application/json; key=${[...Buffer.from(KEY)].map((byte) => `%${byte.toString(16)}`).join('')}`,
    'x-account-id': KEY.slice(5, 17),
  };

  it("passthrough: sends the gateway's request id and drops a header that carries the key, plain or encoded", async () => {
    const gateway = await createModesGateway({ nerdgraphUrl: NO_NERDGRAPH, legacyUrl: legacy.origin });
    const before = legacy.received.length;
    const response = await gateway.app.request('/v2/alerts_policies.json', { headers: { 'x-api-key': KEY, ...disguised } });
    expect(response.status).toBe(200);
    const gatewayId = response.headers.get('x-request-id') ?? '';
    expect(gatewayId).toMatch(UUID);
    const sent = legacy.received.slice(before);
    expect(sent).toHaveLength(1);
    expect(sent[0]?.headers['x-request-id']).toBe(gatewayId);
    for (const name of ['user-agent', 'if-none-match', 'accept', 'x-account-id']) expect(sent[0]?.headers[name], name).toBeUndefined();
    expect(sent[0]?.headers['x-api-key']).toBe(KEY);
    // Nor was any of it logged.
    expect(gateway.logs.filter((line) => Object.values(disguised).some((value) => line.includes(value)))).toEqual([]);

    // Honest values go as they came, the caller's honest id included.
    const honest = { 'x-request-id': '4bf92f3577b34da6a3ce929d0e0e4736', 'user-agent': 'newrelic-client-go/2.0 (linux)', 'if-none-match': 'W/"9a0364b9e99bb480dd25e1f0284c8555"', accept: 'application/json', 'x-account-id': '1000001' };
    await gateway.app.request('/v2/alerts_policies.json', { headers: { 'x-api-key': KEY, ...honest } });
    for (const [name, value] of Object.entries(honest)) expect(legacy.received.at(-1)?.headers[name], name).toBe(value);
  });

  it("compare and candidate: every legacy call, the shadow calls included, carries the gateway's request id, never the raw header", async () => {
    for (const mode of ['compare', 'candidate'] as const) {
      const gateway = await createModesGateway({ nerdgraphUrl: NO_NERDGRAPH, legacyUrl: legacy.origin, routeModes: `*=${mode}` });
      const before = legacy.received.length;
      const response = await gateway.app.request('/v2/applications/1.json', { headers: { 'x-api-key': KEY, ...disguised } });
      await response.text();
      await gateway.sink.waitForRecords(1);
      const gatewayId = response.headers.get('x-request-id');
      expect(gatewayId).toMatch(UUID);
      const sent = legacy.received.slice(before);
      // compare: the caller's call and the noise call; candidate: its two shadow calls.
      expect(sent, mode).toHaveLength(2);
      for (const received of sent) {
        expect(received.headers['x-request-id'], mode).toBe(gatewayId);
        const others = Object.entries(received.headers).filter(([name]) => name !== 'x-api-key');
        const text = JSON.stringify(others);
        expect(Object.values(disguised).filter((value) => text.includes(value)), mode).toEqual([]);
      }
    }
  });
});
