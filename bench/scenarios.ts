/**
 * What `npm run bench` measures: one entry per legacy request, each run against every target.
 * Add a scenario here and the table, the canned capture and the hello-world sizes follow.
 */
export interface Scenario {
  name: string;
  /** Path and query string of the legacy REST v2 request. */
  path: string;
  headers: Record<string, string>;
}

import { generateSandboxData } from '../src/sandbox/data.ts';

const DEMO_KEY = 'NRAK-SANDBOX-DEMO';

// The bench sandbox is deterministic (seed 42), so its first primary-account app is stable.
const showId = generateSandboxData({ seed: 42, apmApps: 500, now: 0 }).apps.find((a) => a.accountId === 1000001)?.id;

export const SCENARIOS: readonly Scenario[] = [
  // 200 applications per answer; concurrent identical requests share one NerdGraph call.
  { name: 'applications list', path: '/v2/applications.json', headers: { 'X-Api-Key': DEMO_KEY } },
  // One application: GUID from the cache, then one entity(guid) call per request.
  { name: 'application show', path: `/v2/applications/${showId}.json`, headers: { 'X-Api-Key': DEMO_KEY } },
];
