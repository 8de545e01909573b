import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { syntheticHostId } from '../common/app-instances.ts';

/**
 * Host ids are computed (syntheticHostId of app id and host name), never stored: two gateway
 * processes (as two replicas would be) give every host the same id, and an id one of them
 * handed out shows the same host on the other. Each process runs `src/index.ts` on its
 * embedded sandbox (same default seed, so the same world), as `npm start` does.
 */
const ROOT = fileURLToPath(new URL('../..', import.meta.url));

interface Gateway {
  child: ChildProcess;
  base: string;
  exited: Promise<number | null>;
}

/** Every child started, registered before it listens, so none outlives the test whatever fails. */
const started: Array<{ child: ChildProcess; exited: Promise<number | null> }> = [];

async function startGateway(): Promise<Gateway> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/index.ts'], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', PORT: '0', LOG_LEVEL: 'warn', SANDBOX_APM_APPS: '30' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  started.push({ child, exited });
  let output = '';
  const base = await new Promise<string>((resolve, reject) => {
    const look = (chunk: Buffer) => {
      output += chunk.toString('utf8');
      const match = /curl -H 'X-Api-Key: [^']+' (http:\/\/[^\s]+)\/v2\/applications\.json/.exec(output);
      if (match?.[1]) resolve(match[1]);
    };
    child.stdout?.on('data', look);
    child.stderr?.on('data', look);
    void exited.then((code) => reject(new Error(`gateway exited with ${code} before listening:\n${output}`)));
  });
  return { child, base, exited };
}

const KEY = { 'X-Api-Key': 'NRAK-SANDBOX-DEMO' };

async function getJson<T>(url: string): Promise<T> {
  const response = await fetch(url, { headers: KEY });
  expect(response.status, url).toBe(200);
  return (await response.json()) as T;
}

interface HostItem {
  id: number;
  host: string;
  links: { application_instances: number[] };
}

describe('host ids across two gateway processes', () => {
  let a: Gateway;
  let b: Gateway;

  beforeAll(async () => {
    [a, b] = await Promise.all([startGateway(), startGateway()]);
  }, 60_000);
  afterAll(async () => {
    for (const { child, exited } of started) {
      if (child.exitCode === null) child.kill('SIGTERM');
      await exited;
    }
  });

  it('lists the same host ids in both processes, and an id from one shows the same host on the other', async () => {
    expect(a.base).not.toBe(b.base);
    const apps = (await getJson<{ applications: Array<{ id: number; reporting: boolean }> }>(`${a.base}/v2/applications.json`)).applications;
    const reporting = apps.filter((app) => app.reporting).slice(0, 6);
    expect(reporting.length).toBeGreaterThanOrEqual(3);
    let hostsSeen = 0;
    for (const app of reporting) {
      const fromA = (await getJson<{ application_hosts: HostItem[] }>(`${a.base}/v2/applications/${app.id}/hosts.json`)).application_hosts;
      const fromB = (await getJson<{ application_hosts: HostItem[] }>(`${b.base}/v2/applications/${app.id}/hosts.json`)).application_hosts;
      const idsOf = (hosts: HostItem[]) => hosts.map((host) => [host.id, host.host, host.links.application_instances]);
      expect(idsOf(fromB)).toEqual(idsOf(fromA));
      for (const host of fromA) {
        // Stateless: the id is a function of (app id, host name), in this process too.
        expect(host.id).toBe(syntheticHostId(app.id, host.host));
        const shown = (await getJson<{ application_host: HostItem }>(`${b.base}/v2/applications/${app.id}/hosts/${host.id}.json`)).application_host;
        expect(shown.host).toBe(host.host);
        expect(shown.links.application_instances).toEqual(host.links.application_instances);
        hostsSeen++;
      }
    }
    expect(hostsSeen).toBeGreaterThanOrEqual(3);
  });
});
