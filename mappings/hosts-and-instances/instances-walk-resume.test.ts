import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSandbox } from '../../sandbox/server.ts';
import { fleetApp } from '../../sandbox/data.ts';
import { currentHosts } from '../../sandbox/hosts.ts';
import type { SandboxApp } from '../../sandbox/model.ts';
import { json, startFakeUpstream } from '../../test/support/fake-upstream.ts';
import { DEMO_KEY, FIXED_NOW, createTestGateway, type TestGateway } from '../../test/support/harness.ts';
import { syntheticHostId } from '../common/app-instances.ts';

/**
 * A walk of applicationInstancesV2's pages cut short (here: one later page fails once) keeps its
 * progress, so the next request resumes from the failed page rather than reading every page again
 * (mappings/common/app-instances.ts WALK_PROGRESS_TTL_MS).
 */
const PAGE = 25;
const FAIL_AT = 5; // the 5th ApplicationInstancesPage read fails, once
let sandbox: ReturnType<typeof createSandbox>;
let upstream: Awaited<ReturnType<typeof startFakeUpstream>>;
let gateway: TestGateway;
let fleet: SandboxApp;
let pageReads = 0;

beforeAll(async () => {
  sandbox = createSandbox({ seed: 7, apmApps: 20, now: () => FIXED_NOW, behave: { instancePageSize: PAGE } });
  upstream = await startFakeUpstream(async (request, res) => {
    if (request.operationName === 'ApplicationInstancesPage' && ++pageReads === FAIL_AT) {
      return json(res, 200, { data: null, errors: [{ message: 'scripted page failure', extensions: { errorClass: 'INTERNAL_SERVER_ERROR' } }] });
    }
    const answer = await sandbox.app.request('/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'api-key': String(request.headers['api-key'] ?? '') },
      body: JSON.stringify({ query: request.query, variables: request.variables, operationName: request.operationName }),
    });
    json(res, answer.status, await answer.json());
  });
  gateway = await createTestGateway({ nerdgraphUrl: upstream.url });
  fleet = fleetApp(sandbox.data.apps) as SandboxApp;
});
afterAll(async () => {
  await upstream.close();
});

describe('a page walk cut short', () => {
  it("resumes on the next request from the page that failed, and the app's links hold every host", async () => {
    const instances = currentHosts(fleet).flatMap((host) => host.instances).length;
    const laterPages = Math.ceil(instances / PAGE) - 1;
    expect(laterPages).toBeGreaterThan(FAIL_AT);
    expect(laterPages).toBeLessThan(20);
    const first = await gateway.app.request(`/v2/applications/${fleet.id}/hosts.json`, { headers: { 'X-Api-Key': DEMO_KEY } });
    expect(first.status).toBeGreaterThanOrEqual(500);
    const readBeforeRetry = pageReads;
    const retried = await gateway.app.request(`/v2/applications/${fleet.id}.json`, { headers: { 'X-Api-Key': DEMO_KEY } });
    expect(retried.status).toBe(200);
    const links = ((await retried.json()) as { application: { links: { application_hosts: number[] } } }).application.links;
    expect(links.application_hosts).toEqual(currentHosts(fleet).map((host) => syntheticHostId(fleet.id, host.name)).sort((a, b) => a - b));
    // Pages 2..FAIL_AT were read once: the retry read only the failed page and those after it.
    expect(pageReads - readBeforeRetry).toBe(laterPages - (FAIL_AT - 1));
  });
});
