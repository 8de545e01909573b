/**
 * Known divergences of the NerdGraph face from the legacy face (createSandbox `diverge`,
 * SANDBOX_DIVERGE). Off by default: then both faces describe one world and the gateway's
 * translation equals the legacy answer. Each one switched on makes NerdGraph report something
 * else for the same data, in one documented way, so that a comparison run (compare or candidate
 * mode, the parity report) must find exactly these differences at exactly these v2 field
 * patterns, and nothing else.
 *
 * Only the NerdGraph face reads these; the legacy face (the reference) never does. The model
 * itself is not changed: writes through either face still land in the one shared world.
 */
import type { DivergenceName, SandboxApp, SandboxData, SandboxDeployment } from './model.ts';

export type { DivergenceName } from './model.ts';

export interface DivergenceSpec {
  description: string;
  /** The v2 field patterns (`applications[].name`) where the translated answer differs. */
  patterns: readonly string[];
  /** The v2 route templates whose answers carry those fields. */
  routes: readonly string[];
}

/** Which APM apps NerdGraph names differently: every third by id. */
export const renamedInNerdgraph = (app: Pick<SandboxApp, 'id'>): boolean => app.id % 3 === 0;
/**
 * What NerdGraph appends to those names. It starts with a space, which sorts before every
 * character that can follow a whole name (names end in their sequence number), so name order,
 * and with it which application lands on which page, is the same on both faces.
 */
export const NERDGRAPH_NAME_SUFFIX = ' (NerdGraph)';
/** NerdGraph's apmSummary.responseTimeAverage is this much of the legacy response time. */
export const RESPONSE_TIME_FACTOR = 1.25;
/** What NerdGraph's deployment events say instead of a set user. */
export const NERDGRAPH_DEPLOYMENT_USER = (user: string): string => `${user} via change tracking`;

export const SANDBOX_DIVERGENCES: Readonly<Record<DivergenceName, DivergenceSpec>> = {
  'app-names': {
    description: `Every third APM application (by id) is named with a "${NERDGRAPH_NAME_SUFFIX.trim()}" suffix in NerdGraph's entities (entity search, entity, instances), as an entity renamed in one system only.`,
    patterns: ['applications[].name', 'application.name', 'application_hosts[].application_name', 'application_host.application_name', 'application_instances[].application_name', 'application_instance.application_name'],
    routes: [
      '/v2/applications.{format}',
      '/v2/applications/{id}.{format}',
      '/v2/applications/{id}/hosts.{format}',
      '/v2/applications/{id}/hosts/{host_id}.{format}',
      '/v2/applications/{id}/instances.{format}',
      '/v2/applications/{id}/instances/{instance_id}.{format}',
    ],
  },
  'response-time': {
    description: `NerdGraph's apmSummary.responseTimeAverage is ${RESPONSE_TIME_FACTOR}x the legacy application_summary.response_time, as a summary computed over another window or with another formula.`,
    patterns: ['applications[].application_summary.response_time', 'application.application_summary.response_time'],
    routes: ['/v2/applications.{format}', '/v2/applications/{id}.{format}'],
  },
  'deployment-user': {
    description: `NerdGraph's deployment events carry "<user> via change tracking" where a user is set (null stays null), as change tracking rewriting the field.`,
    patterns: ['deployments[].user'],
    routes: ['/v2/applications/{id}/deployments.{format}'],
  },
};

export const DIVERGENCE_NAMES = Object.keys(SANDBOX_DIVERGENCES) as DivergenceName[];

export function isDivergenceName(name: string): name is DivergenceName {
  return Object.hasOwn(SANDBOX_DIVERGENCES, name);
}

/**
 * SANDBOX_DIVERGE: comma-separated names, `all`, or empty for none. Throws naming the unknown
 * name and the known ones, so configuration stops start-up with a message.
 */
export function parseDivergences(spec: string): DivergenceName[] {
  const names = spec
    .split(',')
    .map((part) => part.trim())
    .filter((part) => part !== '');
  if (names.length === 1 && names[0] === 'all') return [...DIVERGENCE_NAMES];
  for (const name of names) {
    if (!isDivergenceName(name)) throw new Error(`Unknown divergence "${name}": expected all, or some of ${DIVERGENCE_NAMES.join(', ')}`);
  }
  return [...new Set(names as DivergenceName[])];
}

/** The app as the NerdGraph face shows it: the model's app itself when no divergence touches it. */
export function nerdgraphApp(app: SandboxApp, data: Pick<SandboxData, 'divergences'>): SandboxApp {
  const renamed = data.divergences.has('app-names') && renamedInNerdgraph(app);
  const slower = data.divergences.has('response-time') && app.summary !== null;
  if (!renamed && !slower) return app;
  return {
    ...app,
    ...(renamed && { name: `${app.name}${NERDGRAPH_NAME_SUFFIX}` }),
    ...(slower && app.summary && { summary: { ...app.summary, responseTimeMs: app.summary.responseTimeMs * RESPONSE_TIME_FACTOR } }),
  };
}

/** A deployment event's `user` as the NerdGraph face shows it. */
export function nerdgraphDeploymentUser(deployment: SandboxDeployment, data: Pick<SandboxData, 'divergences'>): string | null {
  if (!data.divergences.has('deployment-user') || deployment.user === null) return deployment.user;
  return NERDGRAPH_DEPLOYMENT_USER(deployment.user);
}
