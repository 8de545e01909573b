/**
 * The request mix `npm run load` sends: dashboards and SLA scripts poll the same few
 * applications and metric sets over and over; page views and scripts look up any application;
 * a share of client mistakes; a trickle of deployment writes.
 */
export interface MixEntry {
  name: string;
  weight: number;
  request: () => { method: 'GET' | 'POST'; path: string; body?: string; headers?: Record<string, string> };
}

const pick = <T>(items: readonly T[]): T => items[Math.floor(Math.random() * items.length)] as T;

export async function buildMix(base: string, key: string): Promise<MixEntry[]> {
  const list = await fetch(`${base}/v2/applications.json`, { headers: { 'X-Api-Key': key } });
  if (!list.ok) throw new Error(`GET /v2/applications.json answered ${list.status}: is ${key.slice(0, 5)}... a key of this gateway?`);
  const apps = ((await list.json()) as { applications: Array<{ id: number; reporting: boolean }> }).applications;
  const ids = apps.map((a) => a.id);
  const polled = apps.filter((a) => a.reporting).slice(0, 8).map((a) => a.id);
  if (ids.length === 0 || polled.length === 0) throw new Error('the account needs applications, some of them reporting');
  const metricSets = ['names[]=HttpDispatcher&names[]=Apdex&summarize=true', 'names[]=HttpDispatcher&names[]=Apdex&names[]=Errors%2Fall&names[]=WebTransaction%2FUri%2Fapi%2Fitems%5Bid%5D'];
  let revision = 0;
  return [
    { name: 'applications list', weight: 12, request: () => ({ method: 'GET', path: pick(['/v2/applications.json', '/v2/applications.json', '/v2/applications.json', '/v2/applications.xml']) }) },
    { name: 'application show', weight: 25, request: () => ({ method: 'GET', path: `/v2/applications/${pick(ids)}.${pick(['json', 'json', 'xml'])}` }) },
    { name: 'metric data', weight: 18, request: () => ({ method: 'GET', path: `/v2/applications/${pick(polled)}/metrics/data.json?${pick(metricSets)}` }) },
    { name: 'hosts list', weight: 15, request: () => ({ method: 'GET', path: `/v2/applications/${pick(polled)}/hosts.json` }) },
    { name: 'metric names', weight: 10, request: () => ({ method: 'GET', path: `/v2/applications/${pick(polled)}/metrics.json?name=HttpDispatcher` }) },
    { name: 'error: unknown application (404)', weight: 8, request: () => ({ method: 'GET', path: `/v2/applications/${1 + Math.floor(Math.random() * 1_000)}.json` }) },
    { name: 'error: bad parameter (422)', weight: 6, request: () => ({ method: 'GET', path: `/v2/applications/${pick(polled)}/metrics/data.json?names[]=HttpDispatcher&period=7` }) },
    { name: 'error: bad key (401/403)', weight: 3, request: () => ({ method: 'GET', path: '/v2/applications.json', headers: { 'X-Api-Key': 'NRAK-LOAD-NOT-A-KEY' } }) },
    { name: 'error: no key (401)', weight: 2, request: () => ({ method: 'GET', path: '/v2/applications.json', headers: {} }) },
    {
      name: 'deployment write',
      weight: 0.2,
      request: () => ({
        method: 'POST',
        path: `/v2/applications/${pick(polled)}/deployments.json`,
        body: JSON.stringify({ deployment: { revision: `load-${process.pid}-${++revision}`, user: 'load' } }),
        headers: { 'Content-Type': 'application/json' },
      }),
    },
  ];
}

export function chooser(mix: readonly MixEntry[]): () => MixEntry {
  const sum = mix.reduce((n, e) => n + e.weight, 0);
  return () => {
    let roll = Math.random() * sum;
    for (const entry of mix) if ((roll -= entry.weight) < 0) return entry;
    return mix[mix.length - 1] as MixEntry;
  };
}

export const describeMix = (mix: readonly MixEntry[]): string => mix.map((e) => `${e.name} ${e.weight}`).join(', ');
