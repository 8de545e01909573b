import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { methodsOf, type Mapping } from './mapping.ts';

/**
 * The v2 route inventory: every (method, route) REST v2 had, which the gateway must answer on
 * purpose (translated, passed through, or refused with a v2 error naming the replacement).
 *
 * Two sources: New Relic's own swagger of 2016 (`../shared/reference/v2-definitions-2016.json`,
 * read where it is, never copied: the keys of `paths` and their methods), and LATER_ROUTES,
 * the routes real clients call that the 2016 file lacks, each with where it is documented.
 * Route templates are compared with placeholder names normalised (`{application_id}` ≡ `{id}`),
 * and `.json`/`.xml` literal suffixes ≡ `.{format}`.
 */
export type InventoryMethod = 'GET' | 'POST' | 'PUT' | 'DELETE';

export interface InventoryRoute {
  method: InventoryMethod;
  route: string;
  /** Where the route is documented: the swagger file, or the reference and client that call it. */
  source: string;
}

const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
/** New Relic's swagger of REST v2 (2016), beside the repository in ../shared. */
export const SWAGGER_PATH = resolve(REPO_ROOT, '../shared/reference/v2-definitions-2016.json');
export const SWAGGER_SOURCE = 'v2-definitions-2016.json (New Relic swagger)';

const SHAPES = 'rest-v2-shapes.md §9';
const CG = 'client-behaviour.md §1 (newrelic-client-go)';

/** Per condition family: list, create under a policy, update and delete by id, as v2 had them. */
function conditionFamily(name: string, source: string): InventoryRoute[] {
  return [
    { method: 'GET', route: `/v2/${name}.{format}`, source },
    { method: 'POST', route: `/v2/${name}/policies/{policy_id}.{format}`, source },
    { method: 'PUT', route: `/v2/${name}/{id}.{format}`, source },
    { method: 'DELETE', route: `/v2/${name}/{id}.{format}`, source },
  ];
}

/** The routes real clients call that the 2016 swagger lacks. */
export const LATER_ROUTES: readonly InventoryRoute[] = [
  ...conditionFamily('alerts_conditions', `${SHAPES} (alerts_conditions); ${CG}; ambitioninc`),
  ...conditionFamily('alerts_nrql_conditions', `${SHAPES} (alerts_nrql_conditions); ${CG}; ambitioninc`),
  ...conditionFamily('alerts_external_service_conditions', `rest-v2.md §0 (kept alive by the EOL); ${CG}`),
  // The 2016 swagger has list, create, update and delete of synthetics conditions already.
  ...conditionFamily('alerts_synthetics_conditions', `${SHAPES} (alerts_synthetics_conditions); ${CG}`),
  ...conditionFamily('alerts_plugins_conditions', `${SHAPES} (alerts_plugins_conditions); ${CG}`),
  // Location failure conditions are listed and created per policy (CG), updated and deleted by id.
  { method: 'GET', route: '/v2/alerts_location_failure_conditions/policies/{policy_id}.{format}', source: `${SHAPES} (alerts_location_failure_conditions); ${CG}` },
  { method: 'POST', route: '/v2/alerts_location_failure_conditions/policies/{policy_id}.{format}', source: `${SHAPES}; ${CG}` },
  { method: 'PUT', route: '/v2/alerts_location_failure_conditions/{id}.{format}', source: CG },
  { method: 'DELETE', route: '/v2/alerts_location_failure_conditions/{id}.{format}', source: CG },
  // Entity conditions: list, add and remove per entity (rest-v2.md §0 keeps the namespace alive).
  { method: 'GET', route: '/v2/alerts_entity_conditions/{entity_id}.{format}', source: 'rest-v2.md §0 (alerts_entity_conditions, kept alive)' },
  { method: 'PUT', route: '/v2/alerts_entity_conditions/{entity_id}.{format}', source: 'rest-v2.md §0 (alerts_entity_conditions, kept alive)' },
  { method: 'DELETE', route: '/v2/alerts_entity_conditions/{entity_id}.{format}', source: 'rest-v2.md §0 (alerts_entity_conditions, kept alive)' },
  // The 2016 swagger has only DELETE on one policy; clients also show and update it (CG).
  { method: 'GET', route: '/v2/alerts_policies/{id}.{format}', source: `${SHAPES} (alerts_policies); ${CG}` },
  { method: 'PUT', route: '/v2/alerts_policies/{id}.{format}', source: `${SHAPES} (alerts_policies: PUT|DELETE /v2/alerts_policies/{id}.json); ${CG}` },
  { method: 'PUT', route: '/v2/alerts_incidents/{id}/acknowledge.{format}', source: `${SHAPES} (alerts_incidents); routes-next.md §5.1; ${CG}` },
  { method: 'PUT', route: '/v2/alerts_incidents/{id}/close.{format}', source: `${SHAPES} (alerts_incidents); routes-next.md §5.1` },
  { method: 'POST', route: '/v2/mobile_applications.{format}', source: 'rest-v2-shapes.md §8; opsmatters/newrelic-api' },
  { method: 'POST', route: '/v2/browser_applications.{format}', source: 'rest-v2-shapes.md §8; client-behaviour.md §1 (ambitioninc browser_applications create)' },
  { method: 'POST', route: '/deployments.xml', source: 'rest-v2.md §0 (Deployments v0 API, deployments.xml)' },
  { method: 'GET', route: '/v2/dashboards.{format}', source: 'routes-next.md §8; client-behaviour.md §1 (ambitioninc dashboards.py)' },
  { method: 'POST', route: '/v2/dashboards.{format}', source: 'routes-next.md §8; ambitioninc dashboards.py' },
  { method: 'GET', route: '/v2/dashboards/{id}.{format}', source: 'routes-next.md §8; ambitioninc dashboards.py' },
  { method: 'PUT', route: '/v2/dashboards/{id}.{format}', source: 'routes-next.md §8; ambitioninc dashboards.py' },
  { method: 'DELETE', route: '/v2/dashboards/{id}.{format}', source: 'routes-next.md §8; ambitioninc dashboards.py' },
];

const METHODS: ReadonlySet<string> = new Set(['get', 'post', 'put', 'delete']);

/** What the loader reads of the swagger: the keys of `paths` and of each path's operations. */
const Swagger = z.object({ paths: z.record(z.string(), z.record(z.string(), z.unknown())) });

/** The (method, route) pairs of a swagger document's `paths`, in file order. */
export function swaggerRoutes(document: unknown): InventoryRoute[] {
  const { paths } = Swagger.parse(document);
  return Object.entries(paths).flatMap(([route, operations]) =>
    Object.keys(operations)
      .filter((key) => METHODS.has(key))
      .map((key) => ({ method: key.toUpperCase() as InventoryMethod, route, source: SWAGGER_SOURCE })),
  );
}

/** `/v2/applications/{application_id}/hosts/{id}.{format}` -> `/v2/applications/{}/hosts/{}.{format}`. */
export function normaliseRoute(route: string): string {
  return route.replace(/\{(?!format\})[^}]*\}/g, '{}').replace(/\.(json|xml)$/, '.{format}');
}

export const routeKey = (method: string, route: string): string => `${method.toUpperCase()} ${normaliseRoute(route)}`;

export interface Inventory {
  /** Every (method, route) once, swagger first, then LATER_ROUTES not already in it. */
  routes: InventoryRoute[];
  /** Whether the swagger file was found (without it, the inventory is LATER_ROUTES only). */
  swagger: boolean;
}

/** The inventory: the swagger at `path` when present, plus LATER_ROUTES, each (method, route) once. */
export function loadInventory(path: string = SWAGGER_PATH): Inventory {
  const swagger = existsSync(path);
  const fromSwagger = swagger ? swaggerRoutes(JSON.parse(readFileSync(path, 'utf8'))) : [];
  const seen = new Set<string>();
  const routes: InventoryRoute[] = [];
  for (const route of [...fromSwagger, ...LATER_ROUTES]) {
    const key = routeKey(route.method, route.route);
    if (seen.has(key)) continue;
    seen.add(key);
    routes.push(route);
  }
  return { routes, swagger };
}

/** The inventory routes no mapping declares (a mapping's every method counts). */
export function unmappedRoutes(inventory: readonly InventoryRoute[], mappings: readonly Mapping[]): InventoryRoute[] {
  const mapped = new Set(mappings.flatMap((mapping) => methodsOf(mapping).map((method) => routeKey(method, mapping.route))));
  return inventory.filter((route) => !mapped.has(routeKey(route.method, route.route)));
}
