import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { RETIRED_ROUTES } from '../../facts/v2-routes.ts';
import { loadMappings } from '../../src/routes/mappings-loader.ts';

/**
 * The stage tests (modes, compare, /bridge/, explain, reports, the process) take their examples
 * of a mode from the fixture routes (test/support/fixture-routes.ts), never from a real v2
 * route, so a resource's change never touches them. A file whose subject is the real routes
 * (the probe, the demo, the README, the compatibility costs, the production process) is listed
 * here with the reason; every other file under test/modes, test/compare and test/ops must name
 * no real route.
 */
const CHECKOUT = fileURLToPath(new URL('../../', import.meta.url));
const STAGE_FOLDERS = ['test/modes', 'test/compare', 'test/ops'];

const ALLOWED: Record<string, string> = {
  'test/modes/explain-cli.test.ts': 'npm run explain over the production table, and the NRQL of a metric-data request (no fixture route sends NRQL)',
  'test/modes/explain-memory.test.ts': 'a child process of the production gateway (npm start), which serves only the real table',
  'test/modes/shadow-guard.test.ts': 'the shadow-work gate on the production wiring (buildGateway), which serves only the real table',
  'test/modes/shadow-unseen.test.ts': "the gateway's own requests on the production wiring (buildGateway), which serves only the real table",
  'test/compare/shared-parity.test.ts': 'replicas built as npm start builds them (buildGateway, Redis), which serve only the real table',
  'test/compare/demo.test.ts': 'npm run demo: the compare demo on the sandbox, over the real routes it shows',
  'test/ops/probe.test.ts': 'npm run probe: checks the real routes of the mapping table on an account',
  'test/ops/probe-v2.test.ts': 'npm run probe: compares the real routes with the legacy API',
  'test/ops/compiled.test.ts': 'the compiled production build, which serves only the real table',
  'test/ops/e2e.test.ts': 'npm start end to end, which serves only the real table',
  'test/ops/bench-stages.test.ts': 'the benchmark, which sends real routes',
  'test/ops/bench-translator.test.ts': 'the benchmark floor (t), which answers the real routes the bench sends',
  'test/ops/log-buffer.test.ts': 'the production process (buildGateway or a child gateway), which serves only the real table',
  'test/ops/log-pipe.test.ts': 'the production process (buildGateway or a child gateway), which serves only the real table',
  'test/ops/shutdown.test.ts': 'the production process (buildGateway or a child gateway), which serves only the real table',
  'test/ops/tracing.test.ts': 'the production process (buildGateway or a child gateway), which serves only the real table',
};

/** A v2 path where a URL, a template or a ROUTE_MODES pattern names one (not src/v2/ modules). */
const V2_PATH = /(?<![A-Za-z_.])\/v2\/([a-z_]+)(\*?)/g;

/** The first segment of every real v2 route: applications, alerts_policies, servers... */
async function realResources(): Promise<Set<string>> {
  const routes = [...(await loadMappings()).map((mapping) => mapping.route), ...RETIRED_ROUTES.map((route) => route.route)];
  return new Set(routes.map((route) => /^\/v2\/([a-z_]+)/.exec(route)?.[1]).filter((segment): segment is string => segment !== undefined));
}

/** The real resources `text` names: `/v2/applications.json`, `/v2/applications/{id}`, or a pattern such as `/v2/alerts_*`. */
export function realRoutesNamed(text: string, resources: ReadonlySet<string>): string[] {
  const named = new Set<string>();
  for (const [, segment, star] of text.matchAll(V2_PATH)) {
    if (segment === undefined) continue;
    if (resources.has(segment)) named.add(`/v2/${segment}`);
    else if (star === '*' && [...resources].some((resource) => resource.startsWith(segment))) named.add(`/v2/${segment}*`);
  }
  return [...named].sort();
}

function testFiles(folder: string): string[] {
  const found: string[] = [];
  for (const entry of readdirSync(join(CHECKOUT, folder), { withFileTypes: true, recursive: true })) {
    if (entry.isFile() && entry.name.endsWith('.ts')) found.push(relative(CHECKOUT, join(entry.parentPath, entry.name)));
  }
  return found.sort();
}

describe('stage tests take their examples of a mode from the fixture routes', async () => {
  const resources = await realResources();
  // This file's own sample text names real routes on purpose.
  const files = STAGE_FOLDERS.flatMap(testFiles).filter((file) => file !== 'test/ops/stage-examples.test.ts');

  it('the check sees real routes in URLs, templates and patterns, and not fixture routes or src/v2/ modules', () => {
    expect(resources.has('applications')).toBe(true);
    const sample = "get('/v2/applications.json'); `${origin}/v2/alerts_policies/7.xml`; 'GET /v2/alerts_*=passthrough'; import '../../src/v2/errors.ts'; '/v2/fixture_widgets.json'";
    expect(realRoutesNamed(sample, resources)).toEqual(['/v2/alerts_*', '/v2/alerts_policies', '/v2/applications']);
  });

  it.each(files.filter((file) => ALLOWED[file] === undefined))('%s names no real v2 route', (file) => {
    expect(realRoutesNamed(readFileSync(join(CHECKOUT, file), 'utf8'), resources)).toEqual([]);
  });

  it.each(Object.entries(ALLOWED))('%s is allowed its real routes (%s), and still names one', (file) => {
    expect(files).toContain(file);
    expect(realRoutesNamed(readFileSync(join(CHECKOUT, file), 'utf8'), resources).length).toBeGreaterThan(0);
  });
});
