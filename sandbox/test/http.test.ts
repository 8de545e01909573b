import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSandbox, type RunningSandbox } from '../server.ts';

describe('sandbox over real HTTP', () => {
  let running: RunningSandbox;

  beforeAll(async () => {
    running = await createSandbox({ seed: 5, apmApps: 20, now: () => 1_750_000_000_000 }).listen(0);
  });

  afterAll(async () => {
    await running.close();
  });

  it('listens on a loopback port and answers POST /graphql', async () => {
    expect(running.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const response = await fetch(`${running.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'Api-Key': 'NRAK-SANDBOX-MULTI' },
      body: JSON.stringify({ query: "{ actor { entitySearch(query: \"domain = 'APM' AND type = 'APPLICATION'\") { count } } }" }),
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    expect(await response.json()).toEqual({ data: { actor: { entitySearch: { count: 45 } } } });
  });

  it('answers 401 on the wire for a missing key', async () => {
    const response = await fetch(`${running.url}/graphql`, { method: 'POST', body: '{}' });
    expect(response.status).toBe(401);
    expect(await response.json()).toMatchObject({ errors: [{ extensions: { error_code: 'BAD_API_KEY' } }] });
  });

  it('close() also ends idle keep-alive connections', async () => {
    const sandbox = await createSandbox({ seed: 5, apmApps: 1 }).listen();
    await fetch(`${sandbox.url}/healthz`); // leaves a keep-alive socket open
    const started = Date.now();
    await sandbox.close();
    expect(Date.now() - started).toBeLessThan(1000);
    await expect(fetch(`${sandbox.url}/healthz`)).rejects.toThrow();
  });
});
