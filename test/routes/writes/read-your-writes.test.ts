import { KeyUsers } from '../../../src/caller/key-users.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SandboxApp } from '../../../sandbox/model.ts';
import { createSandbox } from '../../../sandbox/server.ts';
import { createIdentityHasher } from '../../../src/caller/identity.ts';
import { createMetrics } from '../../../src/ops/metrics.ts';
import { DegradingState, LocalState } from '../../../src/state/degrading-state.ts';
import type { OpenedState } from '../../../src/state/open.ts';
import { RECENT_WRITES_BOUND_MS, RecentWrites } from '../../../src/state/recent-writes.ts';
import { RedisState } from '../../../src/state/redis-state.ts';
import { createStateKeyer } from '../../../src/state/shared-state.ts';
import { DEMO_KEY, FIXED_NOW, PRIMARY_ACCOUNT, createTestGateway, type TestGateway } from '../../support/harness.ts';
import { redisAvailable, startRedis, type TestRedis } from '../../support/redis.ts';
import { untilShared } from '../../support/state.ts';

/**
 * Read-your-writes across New Relic's ingest lag (src/state/recent-writes.ts).
 * The sandbox keeps the lag on (its default, 3 s) on an ingest clock these tests step by hand.
 * Two gateways (replicas) share one state: what one writes, the other lists at once, until
 * NerdGraph shows it; then the remembered write is dropped. On memory and on Redis.
 */
const LAG = 3_000;

let redis: TestRedis | undefined;
const withRedis = redisAvailable();
beforeAll(async () => {
  if (withRedis) redis = await startRedis();
});
afterAll(async () => {
  await redis?.stop();
});

type Backend = [string, () => Promise<OpenedState['state']>];
const backends: Backend[] = [['memory', async () => new LocalState()]];
if (withRedis) {
  backends.push([
    'redis',
    async () => {
      const state = new DegradingState(new RedisState({ url: (redis as TestRedis).url, commandTimeoutMs: 2_000 }), createMetrics(), { probeMs: 50, timeoutMs: 2_000 });
      await untilShared(state);
      return state;
    },
  ]);
}

interface World {
  a: TestGateway;
  b: TestGateway;
  app: SandboxApp;
  recent: RecentWrites;
  step(ms: number): void;
  close(): Promise<void>;
}

async function world(open: () => Promise<OpenedState['state']>): Promise<World> {
  let ingestAt = 0;
  const sandbox = createSandbox({ seed: 9, apmApps: 20, now: () => FIXED_NOW, ingestClock: () => ingestAt });
  const server = await sandbox.listen(0, '127.0.0.1');
  const state = await open();
  // One secret: both replicas name the shared state alike (as STATE_SECRET makes them).
  const shared: OpenedState = { state, keyOf: createStateKeyer(`rw-${Math.random()}`), identityOf: createIdentityHasher(), keyUsers: new KeyUsers(), fingerprintOf: createIdentityHasher() };
  const gateway = () => createTestGateway({ nerdgraphUrl: `${server.url}/graphql`, shared });
  const app = sandbox.data.apps.find((candidate) => candidate.accountId === PRIMARY_ACCOUNT && candidate.reporting) as SandboxApp;
  return {
    a: await gateway(),
    b: await gateway(),
    app,
    recent: new RecentWrites(shared, () => FIXED_NOW),
    step: (ms) => void (ingestAt += ms),
    close: async () => {
      await server.close();
      await state.close();
    },
  };
}

async function send(gateway: TestGateway, method: string, path: string, body?: unknown): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await gateway.app.request(path, {
    method,
    headers: { 'x-api-key': DEMO_KEY, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

const iso = (ms: number): string => new Date(ms).toISOString().replace('.000Z', '+00:00');

describe.each(backends)('read-your-writes (%s)', (_name, open) => {
  it('lists a deployment on every replica until NRQL shows it, and the duplicate check sees it', async () => {
    const { a, b, app, recent, step, close } = await world(open);
    try {
      const written = await send(a, 'POST', `/v2/applications/${app.id}/deployments.json`, { deployment: { revision: 'ryw-1', timestamp: iso(FIXED_NOW - 60_000) } });
      expect(written.status).toBe(201);
      const id = (written.body.deployment as { id: number }).id;
      const ids = async (gateway: TestGateway): Promise<number[]> =>
        ((await send(gateway, 'GET', `/v2/applications/${app.id}/deployments.json`)).body.deployments as Array<{ id: number }>).map((d) => d.id);
      // The other replica lists it, though NRQL does not show it yet.
      expect(await ids(b)).toContain(id);
      // "Later than the latest deployment" counts it: an earlier timestamp is refused, on either replica.
      const earlier = await send(b, 'POST', `/v2/applications/${app.id}/deployments.json`, { deployment: { revision: 'ryw-0', timestamp: iso(FIXED_NOW - 120_000) } });
      expect(earlier.status).toBe(422);
      expect(earlier.body).toEqual({ error: { title: 'Invalid deployment: timestamp must be later than the most recent deployment' } });
      expect(await recent.deployments(PRIMARY_ACCOUNT, app.id)).toHaveLength(1);
      // Once NRQL shows it, the remembered write is dropped; the list is unchanged.
      step(LAG);
      expect(await ids(b)).toContain(id);
      expect(await recent.deployments(PRIMARY_ACCOUNT, app.id)).toEqual([]);
      expect((await ids(a)).filter((listed) => listed === id)).toHaveLength(1);
    } finally {
      await close();
    }
  });

  it('lists a label on every replica until entity search shows it, and hides a removed one until it stops', async () => {
    const { a, b, app, recent, step, close } = await world(open);
    try {
      const labels = async (gateway: TestGateway): Promise<Array<{ key: string; links: { applications: number[] } }>> =>
        (await send(gateway, 'GET', '/v2/labels.json')).body.labels as Array<{ key: string; links: { applications: number[] } }>;
      const put = await send(a, 'PUT', '/v2/labels.json', { label: { category: 'Ryw', name: 'fresh', links: { applications: [app.id] } } });
      expect(put.status).toBe(200);
      expect((await labels(b)).find((label) => label.key === 'Ryw:fresh')?.links.applications).toEqual([app.id]);
      // Deleted (through the other replica) before entity search showed the add: found, removed, gone.
      expect((await send(b, 'DELETE', `/v2/labels/${encodeURIComponent('Ryw:fresh')}.json`)).status).toBe(200);
      expect((await labels(a)).map((label) => label.key)).not.toContain('Ryw:fresh');
      // A seeded label, shown by entity search: removed, it is hidden until the search stops showing it.
      const seeded = (await labels(a)).find((label) => label.links.applications.includes(app.id)) as { key: string };
      expect(seeded).toBeDefined();
      const removed = await send(a, 'DELETE', `/v2/labels/${encodeURIComponent(seeded.key)}.json`, { label: { links: { applications: [app.id] } } });
      expect(removed.status).toBe(200);
      const still = async (gateway: TestGateway): Promise<boolean> =>
        (await labels(gateway)).some((label) => label.key === seeded.key && label.links.applications.includes(app.id));
      expect(await still(b)).toBe(false);
      step(LAG);
      expect(await still(b)).toBe(false);
      expect((await labels(b)).map((label) => label.key)).not.toContain('Ryw:fresh');
      // Entity search shows every change now: the seeded label's removal is forgotten. The removal
      // written over an add the search had not shown stays to the bound (the search not showing
      // the label proved nothing then).
      expect(await recent.labelChanges(PRIMARY_ACCOUNT)).toEqual([{ appId: app.id, category: 'Ryw', name: 'fresh', op: 'remove', untilBound: true }]);
    } finally {
      await close();
    }
  });

  it('keeps hiding a label removed before entity search showed its add, while the add is indexed and the removal not yet', async () => {
    const { a, b, app, step, close } = await world(open);
    try {
      const carried = async (gateway: TestGateway): Promise<boolean> =>
        ((await send(gateway, 'GET', '/v2/labels.json')).body.labels as Array<{ key: string; links: { applications: number[] } }>).some(
          (label) => label.key === 'Ryw:brief' && label.links.applications.includes(app.id),
        );
      expect((await send(a, 'PUT', '/v2/labels.json', { label: { category: 'Ryw', name: 'brief', links: { applications: [app.id] } } })).status).toBe(200);
      step(1_000);
      expect((await send(b, 'DELETE', `/v2/labels/${encodeURIComponent('Ryw:brief')}.json`)).status).toBe(200);
      // Entity search shows neither write yet: the label is gone, as the client wrote it.
      expect(await carried(a)).toBe(false);
      // The add is indexed, the removal not yet: entity search shows the label again, the lists do not.
      step(LAG - 1_000);
      expect(await carried(a)).toBe(false);
      expect(await carried(b)).toBe(false);
      step(1_000);
      expect(await carried(a)).toBe(false);
    } finally {
      await close();
    }
  });

  it('forgets a remembered write after the bound, shown or not', async () => {
    let clock = FIXED_NOW;
    const state = await open();
    try {
      const recent = new RecentWrites({ state, keyOf: createStateKeyer(`bound-${Math.random()}`) }, () => clock);
      await recent.rememberDeployment(PRIMARY_ACCOUNT, { appId: 1, id: 7, revision: 'r', changelog: null, description: null, user: null, timestamp: clock });
      await recent.rememberLabel(PRIMARY_ACCOUNT, { appId: 1, category: 'C', name: 'n', op: 'add' });
      clock += RECENT_WRITES_BOUND_MS - 1;
      expect(await recent.deployments(PRIMARY_ACCOUNT)).toHaveLength(1);
      expect(await recent.labelChanges(PRIMARY_ACCOUNT)).toHaveLength(1);
      clock += 1;
      expect(await recent.deployments(PRIMARY_ACCOUNT)).toEqual([]);
      expect(await recent.labelChanges(PRIMARY_ACCOUNT)).toEqual([]);
    } finally {
      await state.close();
    }
  });
});
