/**
 * The ingest lag (behaviour `ingestLagMs`, behaviours.ts): in New Relic a write reaches the
 * stores NerdGraph reads through a pipeline, not at once.
 *
 * - Deployments are change tracking events: NerdGraph's `changeTrackingCreateEvent` (and the
 *   legacy REST API) store them in NRDB as `Deployment` / `ChangeTrackingEvent` events, which
 *   NRQL reads ("Query your change tracking data", docs.newrelic.com/docs/change-tracking/query-data;
 *   "Track changes using NerdGraph", docs.newrelic.com/docs/change-tracking/config/nerdgraph).
 *   An NRQL query sees an event only once it was ingested.
 * - Tags are read back through entity search ("NerdGraph tutorial: View and add tags",
 *   docs.newrelic.com/docs/apis/nerdgraph/examples/nerdgraph-tagging-api-tutorial: read tags
 *   with `entitySearch`, write them with `taggingAddTagsToEntity`), an index the entity platform
 *   builds; rest-v2.md's migration note says `entitySearch` returns "only entities indexed in the
 *   entity platform". A tag write shows in entity search (its `tags` and `tags.<key>` filters)
 *   once indexed.
 * - The length of the lag is not documented: 3 s by default is the sandbox's choice (UNCONFIRMED),
 *   enough to show a gateway that reads straight after it writes.
 * - The legacy face is v2's own database: it sees its own writes (and the NerdGraph face's) at once.
 *
 * The clock: the lag runs on `data.ingestClock` (createSandbox's `ingestClock`), real time
 * (Date.now) by default, never the injected `now`: tests freeze `now`, and a lag measured on a
 * frozen clock would never end. A test that wants to step the lag by hand passes its own clock.
 */
import type { SandboxApp, SandboxData, SandboxDeployment } from './model.ts';

type Tags = Record<string, string[]>;

/** An app's tags as entity search still shows them, and the tag writes not indexed yet (oldest first). */
interface IndexedTags {
  /** The world the app is in: its ingest clock. */
  data: SandboxData;
  settled: Tags;
  pending: Array<{ at: number; tags: Tags }>;
}

const indexedTags = new WeakMap<SandboxApp, IndexedTags>();
/** Per world, the apps with tag writes still pending: what settleIngest looks at. */
const pendingApps = new WeakMap<SandboxData, Set<SandboxApp>>();

export function ingestNow(data: SandboxData): number {
  return (data.ingestClock ?? Date.now)();
}

const lagOf = (data: SandboxData): number => Math.max(0, data.behaviours.ingestLagMs);

/** When a write made now is ingested (on the ingest clock); undefined when there is no lag. */
export function ingestedAtFor(data: SandboxData): number | undefined {
  const lag = lagOf(data);
  return lag === 0 ? undefined : ingestNow(data) + lag;
}

/** Whether NRQL sees this deployment yet (seeded ones and the legacy face's reads never wait). */
export function isIngested(data: SandboxData, deployment: Pick<SandboxDeployment, 'ingestedAt'>): boolean {
  return deployment.ingestedAt === undefined || deployment.ingestedAt <= ingestNow(data);
}

/**
 * Called by every tag write (tagging.ts) with the app's tags before it: entity search keeps
 * showing them until the write is indexed.
 */
export function noteTagWrite(data: SandboxData, app: SandboxApp, before: Readonly<Record<string, readonly string[]>>): void {
  const at = ingestedAtFor(data);
  if (at === undefined) return;
  let indexed = indexedTags.get(app);
  if (!indexed) {
    indexed = { data, settled: copyTags(before), pending: [] };
    indexedTags.set(app, indexed);
  }
  indexed.pending.push({ at, tags: copyTags(app.userTags ?? {}) });
  let apps = pendingApps.get(data);
  if (!apps) pendingApps.set(data, (apps = new Set()));
  apps.add(app);
}

/**
 * Applies the tag writes whose lag has passed; answers whether any was. The entity index
 * (actor.ts) calls it before each use and rebuilds when something settled, as after a write.
 */
export function settleIngest(data: SandboxData): boolean {
  const apps = pendingApps.get(data);
  if (!apps || apps.size === 0) return false;
  const now = ingestNow(data);
  let settled = false;
  for (const app of apps) {
    const indexed = indexedTags.get(app);
    if (!indexed) {
      apps.delete(app);
      continue;
    }
    while (indexed.pending[0] !== undefined && indexed.pending[0].at <= now) {
      indexed.settled = (indexed.pending.shift() as { tags: Tags }).tags;
      settled = true;
    }
    if (indexed.pending.length === 0) {
      indexedTags.delete(app);
      apps.delete(app);
    }
  }
  if (settled) data.writes.version++;
  return settled;
}

/** The app's user tags as entity search shows them: its tags as of the last indexed write. */
export function indexedUserTagsOf(app: SandboxApp): Readonly<Record<string, readonly string[]>> {
  const indexed = indexedTags.get(app);
  if (!indexed) return app.userTags ?? {};
  // As of now, whether or not settleIngest ran since the lag passed.
  const now = ingestNow(indexed.data);
  let tags = indexed.settled;
  for (const write of indexed.pending) {
    if (write.at > now) break;
    tags = write.tags;
  }
  return tags;
}

function copyTags(tags: Readonly<Record<string, readonly string[]>>): Tags {
  return Object.fromEntries(Object.entries(tags).map(([key, values]) => [key, [...values]]));
}
