import { z } from 'zod';
import { checkedParse, type EntityRef, type TargetWithin, type TimesliceTargetContext, parseAnswer, UpstreamError, hasControlCharacters, notFound, ID_PATTERN } from '../../src/mapping-api.ts';
import { EntityTitles } from '../common/entity-titles.ts';
import { InstancesPage, allInstancesOf, appHosts, appInstances, type AppInstance, syntheticHostId } from '../common/app-instances.ts';

/**
 * Timeslice targets inside an APM app: one of its hosts or instances. The metric request probes
 * the app with its current instances (applicationInstancesV2), so an unknown host or instance
 * id is a 404 from the same request. An instance's scope is computed (`realAgentId IN (id, 'id')`); a
 * host's needs its name, which NerdGraph has and REST ids do not: a small host directory
 * (id -> name, from the app's instances) is read once and remembered per caller, account and
 * app, so a cold host request costs 2 upstream requests and a warm one 1.
 */
export const HOST_DIRECTORY_OPERATION = 'ApplicationHostDirectory';
/** How long a directory is kept, and how long a missing app or host id is (negative entries). */
export const HOST_DIRECTORY_TTL_MS = 60_000;
export const HOST_MISS_TTL_MS = 5_000;

const AppWithInstances = z.object({ applicationInstancesV2: InstancesPage.nullable().optional() });

/** The first page of instances of a probed app entity (already account-checked). */
function firstPageOf(entity: unknown): InstancesPage | null | undefined {
  const parsed = checkedParse(AppWithInstances, entity);
  if (!parsed.success) throw new UpstreamError('upstream_failure', 'application instances: unexpected shape');
  return parsed.data.applicationInstancesV2;
}

/**
 * The current instances of a probed app entity: every page of applicationInstancesV2 (the
 * first from the entity, later ones read once per app and kept briefly: app-instances.ts).
 */
async function instancesOf(ctx: TimesliceTargetContext, app: EntityRef, entity: unknown): Promise<AppInstance[]> {
  return appInstances(await allInstancesOf(ctx, app, firstPageOf(entity)));
}

/** Whether the probed entity holds an instance: its first page decides at no cost when it lists it or is the only page. */
async function holdsInstance(ctx: TimesliceTargetContext, app: EntityRef, entity: unknown, matches: (instance: AppInstance) => boolean): Promise<boolean> {
  const first = firstPageOf(entity);
  if (appInstances(first?.applicationInstances ?? []).some(matches)) return true;
  if (!first?.nextCursor) return false;
  return (await instancesOf(ctx, app, entity)).some(matches);
}

const DirectoryAnswer = z.object({ actor: z.object({ entity: z.looseObject({ guid: z.string(), accountId: z.number() }).nullable() }) });

interface HostDirectory {
  appExists: boolean;
  /** host id -> host name. */
  hosts: Map<number, string>;
  /** Epoch ms (request clock) of the read. */
  readAt: number;
}

async function readDirectory(ctx: TimesliceTargetContext, app: EntityRef): Promise<HostDirectory> {
  const data = await ctx.read(HOST_DIRECTORY_OPERATION, { guid: app.guid });
  const { entity } = parseAnswer(DirectoryAnswer, data, HOST_DIRECTORY_OPERATION).actor;
  if (entity === null) return { appExists: false, hosts: new Map(), readAt: ctx.now };
  // A foreign or mismatched entity is a 404 (counted), never remembered.
  ctx.requireEntity(entity, app, EntityTitles.applicationNotFound);
  // A host name no NRQL literal can carry (control characters) cannot be scoped to: its id 404s.
  const queryable = appHosts(app.id, await instancesOf(ctx, app, entity)).filter((host) => !hasControlCharacters(host.name));
  return { appExists: true, hosts: new Map(queryable.map((host) => [host.id, host.name])), readAt: ctx.now };
}

/**
 * The host name of `rawHostId` in `app`, or v2's 404 (the app's title first, as v2 checked the
 * app first, so even a malformed host id asks whether the app exists). A directory read less
 * than HOST_MISS_TTL_MS ago is authoritative about unknown ids; an older one is re-read at most
 * once per app and HOST_MISS_TTL_MS, so a host that just appeared is found soon.
 */
async function hostNameOf(ctx: TimesliceTargetContext, app: EntityRef, rawHostId: string | undefined): Promise<{ id: number; name: string }> {
  const key = `host-directory/${app.id}`;
  const remembered = () =>
    readDirectory(ctx, app).then((directory) => ({ value: directory, ttlMs: directory.appExists ? HOST_DIRECTORY_TTL_MS : HOST_MISS_TTL_MS, size: directory.hosts.size }));
  let directory = await ctx.cache.load(key, remembered);
  if (!directory.appExists) throw notFound(EntityTitles.applicationNotFound);
  if (rawHostId === undefined || !ID_PATTERN.test(rawHostId)) throw notFound(EntityTitles.applicationHostNotFound);
  const id = Number(rawHostId);
  if (!directory.hosts.has(id) && ctx.now - directory.readAt >= HOST_MISS_TTL_MS) {
    // One re-read per app and HOST_MISS_TTL_MS, whatever ids are asked for: a client walking
    // ids, or polling a host that is gone, costs at most one request per app every few seconds.
    directory = await ctx.cache.load(`${key}/refresh`, () => readDirectory(ctx, app).then((value) => ({ value, ttlMs: HOST_MISS_TTL_MS, size: value.hosts.size })));
    if (!directory.appExists) throw notFound(EntityTitles.applicationNotFound);
  }
  const name = directory.hosts.get(id);
  if (name === undefined) throw notFound(EntityTitles.applicationHostNotFound);
  return { id, name };
}

/** `/v2/applications/{id}/hosts/{host_id}/...`: the app's rows reported from that host. */
export const appHost: TargetWithin = {
  notFoundTitle: EntityTitles.applicationHostNotFound,
  async resolve(ctx, app) {
    const host = await hostNameOf(ctx, app, ctx.pathParams.host_id);
    return {
      scope: [{ attribute: 'host', value: host.name }],
      key: `host/${host.id}`,
      // The host's instances may be on any page: one on the first page settles it at no cost.
      holds: (entity) => holdsInstance(ctx, app, entity, (instance) => instance.host === host.name && syntheticHostId(app.id, instance.host) === host.id),
    };
  },
};

/** `/v2/applications/{id}/instances/{instance_id}/...`: the app's rows of that agent instance. */
export const appInstance: TargetWithin = {
  notFoundTitle: EntityTitles.applicationInstanceNotFound,
  resolve(ctx, app) {
    const raw = ctx.pathParams.instance_id;
    // A malformed instance id still probes the app (asking for no instance): whether the app
    // exists decides which of the two 404s v2 gave.
    const instanceId = raw !== undefined && ID_PATTERN.test(raw) ? Number(raw) : 0;
    return {
      // realAgentId's stored type is undocumented (rest-v2.md §7 item 1): New Relic's migration
      // page quotes it, public nr1 nerdpack code does not, and NRQL never equals a number and a string.
      scope: [{ attribute: 'realAgentId', value: [instanceId, String(instanceId)] }],
      key: `instance/${instanceId}`,
      holds: async (entity) => instanceId !== 0 && holdsInstance(ctx, app, entity, (instance) => instance.id === instanceId),
    };
  },
};
