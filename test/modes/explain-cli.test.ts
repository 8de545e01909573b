import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { appGuid, callOf, explainSandbox, SENTINEL_KEY } from '../support/explain-sandbox.ts';
import type { Explanation } from '../../src/bridge/explanation.ts';
import { DEMO_KEY } from '../support/harness.ts';

/**
 * npm run explain, the production tool over the real mapping table (scripts/explain.ts loads
 * mappings/ only), and the NRQL an explanation lists for a metric-data request (no fixture route
 * sends NRQL). /bridge/explain itself is tested on the fixture routes in explain.test.ts.
 */
const run = promisify(execFile);

const setup = explainSandbox('real');

const metricDataRequest = (): string => `/v2/applications/${setup.live.id}/metrics/data.json?names[]=HttpDispatcher&names[]=Apdex&values[]=call_count&summarize=true`;

describe('GET /bridge/explain: the NRQL of a metric-data request', () => {
  it('metric data: the NRQL is listed, carried in the variables beside the app GUID', async () => {
    const response = await setup.gateway.app.request(`/bridge/explain?${new URLSearchParams({ request: metricDataRequest() }).toString()}`, { headers: { 'X-Api-Key': DEMO_KEY } });
    const text = await response.text();
    expect(response.status, text).toBe(200);
    const e = JSON.parse(text) as Explanation;
    expect(e).toMatchObject({ route: '/v2/applications/{id}/metrics/data.{format}', mapping: 'applications.metric-data', status: 200 });
    const data = callOf(e, 'ApplicationMetricData');
    expect(data.variables.guid).toBe(appGuid(setup.live.id));
    expect(data.nrql).toHaveLength(2);
    expect(data.nrql).toEqual([data.variables.data, data.variables.known]);
    for (const nrql of data.nrql) {
      expect(nrql).toMatch(/^SELECT .* FROM Metric WHERE appId = \d+ AND metricTimesliceName IN \('HttpDispatcher', 'Apdex'\)/);
      expect(nrql).toContain(`appId = ${setup.live.id}`);
    }
  });
});

describe('npm run explain', () => {
  const ROOT = new URL('../../', import.meta.url).pathname;
  /** The CLI as `npm run explain` runs it, with only the environment given (no inherited NerdGraph settings). */
  async function cli(args: string[], env: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
    try {
      const { stdout, stderr } = await run(process.execPath, ['--import', 'tsx', 'scripts/explain.ts', ...args], {
        cwd: ROOT,
        // The seed and size of this file's sandbox, so its app ids exist in the CLI's own.
        env: { PATH: process.env.PATH ?? '', SANDBOX_SEED: '7', SANDBOX_APM_APPS: '40', ...env },
      });
      return { code: 0, stdout, stderr };
    } catch (error) {
      const failed = error as { code: number; stdout: string; stderr: string };
      return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
    }
  }

  it('on the embedded sandbox: a dry-run write, readable, with the mutation marked as not sent', async () => {
    const { code, stdout, stderr } = await cli([`/v2/applications/${setup.live.id}/deployments.json`, '--method', 'POST', '--body', '{"deployment":{"revision":"cli-1"}}']);
    expect(code, stderr).toBe(0);
    expect(stdout).toContain('route     POST /v2/applications/{id}/deployments.{format}');
    expect(stdout).toMatch(/\[\d\] mutation DeploymentCreate {2}\(recorded, NOT sent: dry run\)/);
    expect(stdout).toContain('"version": "cli-1"');
    expect(stdout).toContain('Known gaps:');
    expect(stdout).not.toContain(DEMO_KEY);
    expect(stderr).toContain('embedded sandbox');
    const json = await cli([`/v2/applications/${setup.live.id}.json`, '--json']);
    expect(json.code, json.stderr).toBe(0);
    expect((JSON.parse(json.stdout) as Explanation).calls.map((c) => c.operation)).toContain('ApplicationByGuid');
  });

  it('against a configured NerdGraph with NEW_RELIC_API_KEY: the NRQL printed, the key nowhere', async () => {
    const { code, stdout, stderr } = await cli([metricDataRequest()], { NERDGRAPH_URL: setup.graphqlUrl, NEW_RELIC_API_KEY: SENTINEL_KEY });
    expect(code, stderr).toBe(0);
    expect(stdout).toContain(`POST to ${setup.graphqlUrl}`);
    expect(stdout).toMatch(/NRQL:\n {4}SELECT /);
    expect(stdout).toContain(`appId = ${setup.live.id}`);
    expect(`${stdout}${stderr}`).not.toContain(SENTINEL_KEY);
  });

  it('refuses what it cannot run, with a message and a non-zero exit', async () => {
    const noKey = await cli(['/v2/applications.json'], { NEW_RELIC_REGION: 'us' });
    expect(noKey.code).toBe(1);
    expect(noKey.stderr).toMatch(/set NEW_RELIC_API_KEY/);
    const unknown = await cli(['/v2/nothing_here.json']);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('404 Unknown v2 resource');
    const none = await cli([]);
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('usage: npm run explain');
  });
});
