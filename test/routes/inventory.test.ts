import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { coverage } from '../../src/routes/compat-report.ts';
import { LATER_ROUTES, SWAGGER_PATH, loadInventory, normaliseRoute, routeKey, swaggerRoutes, unmappedRoutes, type Inventory } from '../../src/routes/inventory.ts';
import { methodsOf, type Mapping } from '../../src/routes/mapping.ts';
import { loadMappings } from '../../src/routes/mappings-loader.ts';

/**
 * Every v2 route (New Relic's swagger of 2016 plus the later
 * routes real clients call) has a mapping, so none falls through to a generic 404.
 */

describe('route inventory', () => {
  let mappings: Mapping[];
  let inventory: Inventory;

  beforeAll(async () => {
    mappings = await loadMappings();
    inventory = loadInventory();
  });

  it('reads the swagger beside the repository (../shared/reference) and adds the later routes', () => {
    expect(existsSync(SWAGGER_PATH), `${SWAGGER_PATH} (check out ../shared beside the repository)`).toBe(true);
    expect(inventory.swagger).toBe(true);
    const keys = inventory.routes.map((r) => routeKey(r.method, r.route));
    expect(new Set(keys).size).toBe(keys.length);
    // 64 (method, route) pairs in the 2016 file; the later routes add what it lacks.
    expect(inventory.routes.filter((r) => r.source.startsWith('v2-definitions')).length).toBe(64);
    for (const later of LATER_ROUTES) expect(keys).toContain(routeKey(later.method, later.route));
    for (const expected of ['PUT /v2/alerts_incidents/{id}/close.{format}', 'POST /deployments.xml', 'DELETE /v2/dashboards/{id}.{format}', 'GET /v2/users/{id}.{format}']) {
      const [method, route] = expected.split(' ') as [string, string];
      expect(keys).toContain(routeKey(method, route));
    }
  });

  it('has a mapping for every (method, route) of the inventory', () => {
    const missing = unmappedRoutes(inventory.routes, mappings);
    if (missing.length > 0) console.error(`routes without a mapping:\n${missing.map((r) => `  ${r.method} ${r.route}  (${r.source})`).join('\n')}`);
    expect(missing.map((r) => `${r.method} ${r.route}`)).toEqual([]);
  });

  it('gives every mapping a fidelity of exact, approximate, passthrough or unsupported', () => {
    for (const m of mappings) expect(['exact', 'approximate', 'passthrough', 'unsupported'], m.id).toContain(m.fidelity);
  });

  it('gives every unsupported mapping a reason, a replacement and a 4xx title', () => {
    const unsupported = mappings.filter((m) => m.kind === 'unsupported');
    expect(unsupported.length).toBeGreaterThanOrEqual(29);
    for (const m of unsupported) {
      expect(m.fidelity, m.id).toBe('unsupported');
      expect(m.reason.length, `${m.id} reason`).toBeGreaterThan(20);
      expect(m.replacement.length, `${m.id} replacement`).toBeGreaterThan(10);
      expect(m.title.length, `${m.id} title`).toBeGreaterThan(20);
      expect(m.status >= 400 && m.status < 500, m.id).toBe(true);
    }
  });

  it('normalises placeholder names and literal format suffixes', () => {
    expect(normaliseRoute('/v2/applications/{application_id}/hosts/{id}.{format}')).toBe(normaliseRoute('/v2/applications/{id}/hosts/{host_id}.{format}'));
    expect(routeKey('post', '/deployments.xml')).toBe(routeKey('POST', '/deployments.{format}'));
    expect(normaliseRoute('/v2/users/{id}.{format}')).not.toBe(normaliseRoute('/v2/users.{format}'));
  });

  it('reads only what the swagger says: the keys of paths and their methods', () => {
    expect(swaggerRoutes({ paths: { '/v2/x.{format}': { get: {}, put: {}, parameters: [] } } }).map((r) => `${r.method} ${r.route}`)).toEqual([
      'GET /v2/x.{format}',
      'PUT /v2/x.{format}',
    ]);
    expect(() => swaggerRoutes({ paths: 'nope' })).toThrow();
    // Without the file, the inventory is the later routes alone (and coverage says nothing of it).
    const dir = mkdtempSync(join(tmpdir(), 'inventory-'));
    const absent = loadInventory(join(dir, 'absent.json'));
    expect(absent.swagger).toBe(false);
    expect(absent.routes.length).toBe(new Set(LATER_ROUTES.map((r) => routeKey(r.method, r.route))).size);
    writeFileSync(join(dir, 'mini.json'), JSON.stringify({ paths: { '/v2/users.{format}': { get: {} } } }));
    expect(loadInventory(join(dir, 'mini.json')).routes[0]).toMatchObject({ method: 'GET', route: '/v2/users.{format}' });
  });

  it('npm run compat prints counts per fidelity and the inventory coverage', () => {
    const lines = coverage(mappings, inventory);
    const pairs = mappings.reduce((n, m) => n + methodsOf(m).length, 0);
    expect(lines[0]).toBe(`(method, route) pairs: ${pairs}`);
    for (const fidelity of ['exact', 'approximate', 'passthrough', 'unsupported']) expect(lines.some((l) => l.startsWith(`- ${fidelity}: `))).toBe(true);
    const missing = unmappedRoutes(inventory.routes, mappings).length;
    expect(lines).toContain(`inventory: ${inventory.routes.length - missing} of ${inventory.routes.length} routes mapped`);
    // Without the swagger beside the repository, the report says the inventory was not checked.
    const unchecked = coverage(mappings, { routes: [], swagger: false }).filter((l) => l.startsWith('inventory:'));
    expect(unchecked).toEqual([expect.stringContaining('inventory: not checked')]);
  });
});
