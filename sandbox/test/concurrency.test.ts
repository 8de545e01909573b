import { describe, expect, it } from 'vitest';
import { SANDBOX_DEMO_USER_ID } from '../data.ts';
import { TOO_MANY_CONCURRENT_BODY } from '../graphql.ts';
import { createSandbox, type Sandbox } from '../server.ts';

/**
 * The sandbox's NerdGraph limits concurrent requests per user, whatever key
 * the user sends ("NerdGraph usage limits"), and answers `actor { user }` with the key's user.
 * Each answer is held (nerdgraphHold) so the requests of a burst are all in flight at once.
 */
const QUERY = JSON.stringify({ query: '{ actor { user { id email name } } }' });
const post = async (sandbox: Sandbox, apiKey: string): Promise<Response> =>
  sandbox.app.request('/graphql', { method: 'POST', headers: { 'content-type': 'application/json', 'api-key': apiKey }, body: QUERY });

const ALICE_1 = 'NRAK-ALICE-ONE';
const ALICE_2 = 'NRAK-ALICE-TWO';
const BOB = 'NRAK-BOB';
const keys = new Map([
  [ALICE_1, [1000001]],
  [ALICE_2, [1000001]],
  [BOB, [1000001]],
]);

/**
 * A sandbox whose answers are held until `held` of them are waiting (no timing): then every
 * one held and every later one goes. Too few admitted would never open it (the test times out).
 */
function sandboxWith(held: number, behave: { concurrentRequestsPerUser?: number } = {}): Sandbox {
  let waiting = 0;
  let open: () => void = () => undefined;
  const gate = new Promise<void>((resolve) => (open = resolve));
  const hold = async (): Promise<void> => {
    if (++waiting >= held) open();
    return gate;
  };
  return createSandbox({ seed: 42, apmApps: 5, apiKeys: keys, keyUsers: new Map([[ALICE_1, 7001], [ALICE_2, 7001]]), nerdgraphHold: hold, behave });
}

async function burst(sandbox: Sandbox, perKey: Record<string, number>): Promise<{ key: string; status: number; body: unknown }[]> {
  const sent = Object.entries(perKey).flatMap(([key, count]) => Array.from({ length: count }, () => key));
  return Promise.all(sent.map(async (key) => {
    const answer = await post(sandbox, key);
    return { key, status: answer.status, body: await answer.json() };
  }));
}

describe('sandbox NerdGraph: concurrency per user', () => {
  it('answers 429 beyond 25 in flight for one user, whichever of its keys each was sent with', async () => {
    const sandbox = sandboxWith(25);
    const answers = await burst(sandbox, { [ALICE_1]: 15, [ALICE_2]: 15 });
    const refused = answers.filter((a) => a.status === 429);
    expect(refused).toHaveLength(5);
    for (const answer of refused) expect(answer.body).toEqual(TOO_MANY_CONCURRENT_BODY);
    expect(answers.filter((a) => a.status === 200)).toHaveLength(25);
    // Once they have completed, new requests succeed again.
    expect((await post(sandbox, ALICE_2)).status).toBe(200);
  });

  it('counts each user apart: 25 each for two users is within both limits', async () => {
    const answers = await burst(sandboxWith(50), { [ALICE_1]: 25, [BOB]: 25 });
    expect(answers.map((a) => a.status)).toEqual(Array(50).fill(200));
  });

  it('takes the limit from the behaviour, and 0 turns it off', async () => {
    const small = await burst(sandboxWith(3, { concurrentRequestsPerUser: 3 }), { [ALICE_1]: 2, [ALICE_2]: 2 });
    expect(small.filter((a) => a.status === 429)).toHaveLength(1);
    const off = await burst(sandboxWith(40, { concurrentRequestsPerUser: 0 }), { [ALICE_1]: 20, [ALICE_2]: 20 });
    expect(off.map((a) => a.status)).toEqual(Array(40).fill(200));
  });

  it("answers actor.user with the key's user: one for two keys of one user, another for another user", async () => {
    const sandbox = sandboxWith(0);
    const userOf = async (key: string) => ((await (await post(sandbox, key)).json()) as { data: { actor: { user: { id: number; email: string; name: string } } } }).data.actor.user;
    const [one, two, bob] = [await userOf(ALICE_1), await userOf(ALICE_2), await userOf(BOB)];
    expect(one).toEqual({ id: 7001, email: 'sandbox-user-7001@example.com', name: 'Sandbox User' });
    expect(two).toEqual(one);
    expect(bob.id).not.toBe(7001);
  });

  it('gives the default world two keys of one user', async () => {
    const sandbox = createSandbox({ seed: 42, apmApps: 5 });
    const ids = await Promise.all(['NRAK-SANDBOX-DEMO', 'NRAK-SANDBOX-DEMO-CI', 'NRAK-SANDBOX-MULTI'].map(async (key) => ((await (await post(sandbox, key)).json()) as { data: { actor: { user: { id: number } } } }).data.actor.user.id));
    expect(ids.slice(0, 2)).toEqual([SANDBOX_DEMO_USER_ID, SANDBOX_DEMO_USER_ID]);
    expect(ids[2]).not.toBe(SANDBOX_DEMO_USER_ID);
  });
});
