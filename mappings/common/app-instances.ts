import { ID_PATTERN, fnv1a32, type CallerScope, repeatedCursor, parseAnswer, UpstreamError, V2Error, notFound } from '../../src/mapping-api.ts';
import { EntityTitles } from './entity-titles.ts';
import { z } from 'zod';

/**
 * An APM application's agent instances as NerdGraph lists them
 * (`ApmApplicationEntity.applicationInstancesV2`, fragment ApplicationInstanceFields), and the
 * v2 hosts built from them. REST v2 had host ids; NerdGraph has host names only, so a host id
 * is syntheticHostId(appId, host name): the same on every call, process and replica, with no
 * state (rest-v2.md §6). Instance ids are the agent instance ids (`details.id`).
 */
export const ApplicationInstance = z.object({
  details: z.object({
    id: z.string(),
    host: z.string(),
    instanceName: z.string().nullable().optional(),
    language: z.string().nullable().optional(),
    name: z.string().nullable().optional(),
  }),
});
export type ApplicationInstance = z.infer<typeof ApplicationInstance>;

/** One page of `applicationInstancesV2` as every document selects it (instances and nextCursor). */
export const InstancesPage = z.object({
  applicationInstances: z.array(ApplicationInstance).nullable().optional(),
  nextCursor: z.string().nullable().optional(),
});
export type InstancesPage = z.infer<typeof InstancesPage>;

// ---------------------------------------------------------------------------------------------
// Every page of applicationInstancesV2

/** The document that reads one later page (the first comes with each route's own document). */
export const INSTANCES_PAGE_OPERATION = 'ApplicationInstancesPage';
/** At most this many pages of one app's instances are read (the first included)... */
export const MAX_INSTANCE_PAGES = 20;
/** ...and at most this many instances kept, whatever NerdGraph's page size. */
export const MAX_INSTANCES = 10_000;
/** How long a walked list is kept, per caller, account and app (hosts come and go within minutes). */
export const INSTANCE_LIST_TTL_MS = 30_000;

export const INSTANCES_BOUND_TITLE =
  `This application has more agent instances than the gateway reads (more than ${MAX_INSTANCE_PAGES} pages or ${MAX_INSTANCES} instances of NerdGraph's applicationInstancesV2); ` +
  'its hosts and instances cannot be listed whole, so none are shown';

/** The bound's answer: never a cut list, whose missing hosts would read as gone (and 404). */
export const instancesOverBound = (): V2Error => new V2Error(503, INSTANCES_BOUND_TITLE, { kind: 'instances_over_bound' });

/** Whether `error` is the bound's answer (instancesOverBound). */
export const isInstancesOverBound = (error: unknown): boolean => error instanceof V2Error && error.kind === 'instances_over_bound';

const PageAnswer = z.object({
  actor: z.object({
    entity: z.looseObject({ guid: z.string(), accountId: z.number(), applicationInstancesV2: InstancesPage.nullable().optional() }).nullable(),
  }),
});

/** A walked list, or the bound's mark (kept too, so a too-large app is not walked on every call). */
type Walk = { instances: ApplicationInstance[]; overBound: boolean };

/** How long a walk cut short (a request's deadline, a failed page) is kept for the next request to resume. */
export const WALK_PROGRESS_TTL_MS = 60_000;

/** A walk cut short: the pages read so far (the first included) and the cursor of the next. */
type Progress = { instances: ApplicationInstance[]; cursor: string; seen: string[]; pages: number };

/** Pages 2.. of the app's instances, from the first page's cursor or a kept walk's progress; bounded, refusing a repeated cursor. */
async function walkLaterPages(
  read: CallerScope['read'],
  app: { guid: string; accountId: number },
  first: ApplicationInstance[],
  cursor: string,
  progress: { kept: Progress | undefined; keep: (progress: Progress | undefined) => void },
): Promise<Walk> {
  // A kept walk resumes where it stopped: its pages (its own first one included) and cursor.
  const start = progress.kept;
  const instances = start ? [...start.instances] : [...first];
  const seen = new Set<string>(start ? start.seen : [cursor]);
  let next: string | null | undefined = start ? start.cursor : cursor;
  for (let pages = start ? start.pages : 1; next; pages++) {
    if (pages >= MAX_INSTANCE_PAGES || instances.length >= MAX_INSTANCES) {
      progress.keep(undefined);
      return { instances: [], overBound: true };
    }
    const answer: z.infer<typeof PageAnswer> = parseAnswer(PageAnswer, await read(INSTANCES_PAGE_OPERATION, { guid: app.guid, cursor: next }), INSTANCES_PAGE_OPERATION);
    const entity = answer.actor.entity;
    // Deleted between two pages: the app is gone (its 404; a failed load is not kept).
    if (entity === null) {
      progress.keep(undefined);
      throw notFound(EntityTitles.applicationNotFound);
    }
    if (entity.guid !== app.guid || entity.accountId !== app.accountId) throw new UpstreamError('upstream_failure', `${INSTANCES_PAGE_OPERATION}: another entity answered`);
    instances.push(...(entity.applicationInstancesV2?.applicationInstances ?? []));
    next = entity.applicationInstancesV2?.nextCursor;
    if (next) {
      if (seen.has(next)) {
        progress.keep(undefined);
        throw repeatedCursor(INSTANCES_PAGE_OPERATION);
      }
      seen.add(next);
      // Kept after every page, so a walk cut short by the next read resumes from here.
      progress.keep({ instances: [...instances], cursor: next, seen: [...seen], pages: pages + 1 });
    }
  }
  progress.keep(undefined);
  if (instances.length > MAX_INSTANCES) return { instances: [], overBound: true };
  return { instances, overBound: false };
}

/**
 * Every agent instance of an app, given the first page of `applicationInstancesV2` its route's
 * own document read. One page (no nextCursor) is the whole list, at no cost. Otherwise the
 * later pages are read through ApplicationInstancesPage, at most MAX_INSTANCE_PAGES pages and
 * MAX_INSTANCES instances (past either: instancesOverBound, never a cut list), and the whole
 * list is kept INSTANCE_LIST_TTL_MS per caller, account and app (ctx.cache), so the hosts and
 * instances routes, the application show and the host and instance metric routes of one app
 * walk the pages once between them, not on every call. The kept list is one snapshot: a request
 * within its life sees it whole rather than its own first page joined to an older rest. A walk
 * cut short (the request's deadline, a failed page) keeps its progress WALK_PROGRESS_TTL_MS
 * (ctx.cache: the pages read, its first included, and the next cursor), so the next request
 * resumes it rather than starting over; the list it ends with is then read across requests.
 */
export async function allInstancesOf(
  ctx: Pick<CallerScope, 'cache' | 'accountId'>,
  app: { id: number; guid: string },
  first: InstancesPage | null | undefined,
): Promise<ApplicationInstance[]> {
  const firstItems = first?.applicationInstances ?? [];
  const cursor = first?.nextCursor;
  if (!cursor) return firstItems;
  const key = `app-instances/${app.id}`;
  const progressKey = `${key}/progress`;
  const walked = await ctx.cache.load<Walk>(key, async (read) => {
    const walk = await walkLaterPages(read, { guid: app.guid, accountId: ctx.accountId }, firstItems, cursor, {
      kept: ctx.cache.get<Progress>(progressKey),
      keep: (progress) => (progress === undefined ? ctx.cache.forget(progressKey) : ctx.cache.set(progressKey, { value: progress, ttlMs: WALK_PROGRESS_TTL_MS, size: progress.instances.length })),
    });
    // Weighed by its instances against the cache's size bound (src/caller/caller-cache.ts).
    return { value: walk, ttlMs: INSTANCE_LIST_TTL_MS, size: walk.instances.length };
  });
  if (walked.overBound) throw instancesOverBound();
  return walked.instances;
}

export interface AppInstance {
  /** The v2 instance id. */
  id: number;
  host: string;
  instanceName: string | null;
  /** The port of a `host:port` instance name (Java agents name instances so), else 0 as v2 showed. */
  port: number;
}

export interface AppHost {
  /** The v2 host id: syntheticHostId(appId, name). */
  id: number;
  name: string;
  instances: AppInstance[];
}

/**
 * REST v2 host ids name an (application, host) pair; NerdGraph only knows host names. The
 * gateway derives a stable positive 31-bit id from the pair, so a client that lists hosts and
 * comes back with an id is understood. Real v2 host ids are different numbers: a documented
 * gap of every route that shows host ids.
 */
export function syntheticHostId(applicationId: number, hostName: string): number {
  return hostIdsOf(applicationId)(hostName);
}

/**
 * syntheticHostId for many hosts of one app: fnv1a32 of `${applicationId}|${hostName}` hashed in
 * parts, the app's part once, so no joined string is built per host.
 */
function hostIdsOf(applicationId: number): (hostName: string) => number {
  const appPart = fnv1a32(`${applicationId}|`);
  // Positive, 31-bit and non-zero, so it is a v2 id.
  return (hostName) => fnv1a32(hostName, appPart) >>> 1 || 1;
}

const PORT_SUFFIX = /:(\d{1,5})$/;

export function portOf(instanceName: string | null | undefined): number {
  const port = instanceName ? Number(PORT_SUFFIX.exec(instanceName)?.[1] ?? 0) : 0;
  return port <= 65_535 ? port : 0;
}

/** Instances with a usable numeric id, deduplicated, in id order. */
export function appInstances(instances: readonly ApplicationInstance[]): AppInstance[] {
  const byId = new Map<number, AppInstance>();
  for (const { details } of instances) {
    const id = Number(details.id);
    if (!ID_PATTERN.test(details.id) || byId.has(id)) continue;
    byId.set(id, { id, host: details.host, instanceName: details.instanceName ?? null, port: portOf(details.instanceName) });
  }
  return [...byId.values()].sort((a, b) => a.id - b.id);
}

/** The app's hosts: its instances grouped by host name, in host id order. */
export function appHosts(appId: number, instances: readonly AppInstance[]): AppHost[] {
  const byName = new Map<string, AppHost>();
  const hostIdOf = hostIdsOf(appId);
  for (const instance of instances) {
    let host = byName.get(instance.host);
    if (!host) {
      host = { id: hostIdOf(instance.host), name: instance.host, instances: [] };
      byName.set(instance.host, host);
    }
    host.instances.push(instance);
  }
  return [...byName.values()].sort((a, b) => a.id - b.id);
}

/** The id lists of an application's `links`, as list and show both send them. */
export interface AppLinkIds {
  instances: number[];
  hosts: number[];
}

/** links from NerdGraph's instances (show: applicationInstancesV2). */
export function linkIdsFromInstances(appId: number, instances: readonly ApplicationInstance[]): AppLinkIds {
  const valid = appInstances(instances);
  return { instances: valid.map((instance) => instance.id), hosts: appHosts(appId, valid).map((host) => host.id) };
}

/**
 * links from NRQL's uniques(host) and uniques(realAgentId) of the app (list pages): the same
 * ids as linkIdsFromInstances gives for the same instances (host ids are syntheticHostId).
 */
export function linkIdsFromNames(appId: number, hostNames: readonly string[], agentIds: readonly (string | number)[]): AppLinkIds {
  const instances: number[] = [];
  for (const id of agentIds) {
    // A number passes ID_PATTERN's test of its text exactly when it is an integer of 1 to 15 digits.
    if (typeof id === 'number' ? Number.isInteger(id) && id >= 1 && id < 1e15 : ID_PATTERN.test(id)) instances.push(Number(id));
  }
  const hostIdOf = hostIdsOf(appId);
  const hosts: number[] = [];
  // An app has a few hosts: a look back through the list costs less than a Set until it is long.
  const seen = hostNames.length > FEW ? new Set<string>() : undefined;
  for (let i = 0; i < hostNames.length; i++) {
    const name = hostNames[i] as string;
    if (seen ? seen.has(name) : hostNames.indexOf(name) < i) continue;
    seen?.add(name);
    hosts.push(hostIdOf(name));
  }
  return { instances: uniqueAscending(ascending(instances)), hosts: ascending(hosts) };
}

/** Up to this many, the id lists of one app are sorted and deduplicated by hand. */
const FEW = 16;

/**
 * Sorts in place, ascending. A list page sorts two short lists per app, and Array.prototype.sort
 * with a comparator costs more in setup than an insertion sort of a few numbers.
 */
function ascending(values: number[]): number[] {
  if (values.length > FEW) return values.sort((a, b) => a - b);
  for (let i = 1; i < values.length; i++) {
    const value = values[i] as number;
    let j = i - 1;
    for (; j >= 0 && (values[j] as number) > value; j--) values[j + 1] = values[j] as number;
    values[j + 1] = value;
  }
  return values;
}

/** Drops repeats from a sorted list, in place. */
function uniqueAscending(sorted: number[]): number[] {
  let kept = 0;
  for (const value of sorted) if (kept === 0 || sorted[kept - 1] !== value) sorted[kept++] = value;
  sorted.length = kept;
  return sorted;
}
