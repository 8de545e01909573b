/**
 * `node bench/json-floor.ts`: the least CPU a translation of a body can cost. A translation
 * must parse the upstream JSON and serialise the v2 JSON that a byte-streaming proxy only
 * forwards; this times JSON.parse and JSON.stringify alone (no validation, no reshape) on the
 * v2 bodies of the bench's distinct list (200 apps by filter[ids]) and metric data, taken from
 * an in-process sandbox's legacy face. Compare with the proxy (d)'s whole CPU per request in
 * `npm run bench` (docs/performance.md): a goal of 1.25x (d) is below this floor.
 */
import { createSandbox } from '../sandbox/server.ts';
import { cpuRound } from './cpu-per-call.ts';

const KEY = 'NRAK-SANDBOX-DEMO';
const sandbox = createSandbox({ apmApps: 2_000 });

async function body(path: string): Promise<string> {
  const response = await sandbox.app.request(path, { headers: { 'X-Api-Key': KEY } });
  if (response.status !== 200) throw new Error(`${path}: ${response.status}`);
  return response.text();
}

/** CPU µs per call of `op`, the least of 3 rounds of `n` (after a warm-up round). */
function cpuPerCall(op: () => number, n = 1_000): number {
  const round = (): number => cpuRound(op, n);
  round();
  return Math.min(round(), round(), round());
}

const firstPage = JSON.parse(await body('/v2/applications.json')) as { applications: { id: number }[] };
const ids = firstPage.applications.slice(0, 200).map((app) => app.id);
const bodies = {
  'applications list, 200 ids': await body(`/v2/applications.json?filter[ids]=${ids.join(',')}`),
  'metric data, 2 names': await body(`/v2/applications/${ids[0]}/metrics/data.json?names[]=HttpDispatcher&names[]=Apdex&summarize=false`),
};

console.log(`node ${process.version}; CPU µs per call, least of 3 rounds of 1,000`);
console.log('| body | bytes | JSON.parse | JSON.stringify | both |');
console.log('|---|---|---|---|---|');
for (const [name, text] of Object.entries(bodies)) {
  const parsed: unknown = JSON.parse(text);
  const parse = cpuPerCall(() => (JSON.parse(text) === null ? 0 : 1));
  const stringify = cpuPerCall(() => JSON.stringify(parsed).length);
  const both = cpuPerCall(() => JSON.stringify(JSON.parse(text)).length);
  console.log(`| ${name} | ${text.length} | ${parse.toFixed(0)} | ${stringify.toFixed(0)} | ${both.toFixed(0)} |`);
}
