import { createHash } from 'node:crypto';
import { z } from 'zod';
import { inRecordedRun } from '../upstream/recorded-run.ts';
import type { SharedState, StateKeyer } from './shared-state.ts';

/**
 * Read-your-writes across New Relic's ingest lag. A deployment is a change
 * tracking event that NRQL sees only once ingested, and a tag write shows in entity search only
 * once indexed; a v2 client lists right after it writes, and v2 (one database) showed the write.
 * So every deployment and label change the gateway confirmed is remembered here, in the state
 * replicas share (src/state/: Redis, or this process's memory), per account, and the lists
 * that read them merge what is remembered and not yet shown by NerdGraph:
 *
 * - a remembered write NerdGraph shows (the deployment's id is listed; the label is on, or off,
 *   the application as written) is dropped: from then on NerdGraph's answer is the truth;
 * - a label change written over a still remembered opposite change (added, then removed before
 *   NerdGraph showed the add) is kept until the bound: NerdGraph not showing it says nothing
 *   then, the add may still arrive;
 * - every remembered write expires RECENT_WRITES_BOUND_MS after it was confirmed, shown or not
 *   (a write NerdGraph never shows, an application deleted meanwhile).
 *
 * Storage: one hash per (kind, account, bound-long bucket of the gateway clock), each living two
 * bounds (hashSet's TTL starts at creation); reads look at the current and the previous bucket
 * and filter entries by their own time. Field names are ids or hashes, never user text; values
 * are read back through zod (another replica, or an older version, may have written them).
 * Failures of the state never fail a request: a write is still confirmed, a list still answers
 * NerdGraph's view. A recorded run (explain, a dry run) remembers nothing.
 *
 * Known limit: a drop races a write of the same deployment or label landing between the read
 * that saw NerdGraph show it and the drop (another replica writing the same label again); that
 * write is then only NerdGraph's to show, as without this memory.
 */
export const RECENT_WRITES_BOUND_MS = 10 * 60_000;

export interface RememberedDeployment {
  appId: number;
  /** The v2 deployment id (deploymentV2Id of the change-tracking id). */
  id: number;
  revision: string;
  changelog: string | null;
  description: string | null;
  user: string | null;
  /** Epoch ms. */
  timestamp: number;
}

export interface LabelChange {
  appId: number;
  category: string;
  name: string;
  op: 'add' | 'remove';
}

export interface RememberedLabelChange extends LabelChange {
  /** Only the bound ends it (written over an opposite change NerdGraph had not shown yet). */
  untilBound: boolean;
}

const DeploymentEntry = z.object({
  at: z.number(),
  appId: z.number().int(),
  id: z.number().int(),
  revision: z.string(),
  changelog: z.string().nullable(),
  description: z.string().nullable(),
  user: z.string().nullable(),
  timestamp: z.number(),
});

const LabelEntry = z.object({
  at: z.number(),
  appId: z.number().int(),
  category: z.string(),
  name: z.string(),
  op: z.enum(['add', 'remove']),
  untilBound: z.boolean(),
});

type Kind = 'deployments' | 'labels';

interface Entry<T> {
  field: string;
  value: T & { at: number };
}

const labelField = (change: Pick<LabelChange, 'appId' | 'category' | 'name'>): string =>
  createHash('sha256').update(JSON.stringify([change.appId, change.category, change.name])).digest('base64url').slice(0, 24);

export class RecentWrites {
  private readonly shared: { state: SharedState; keyOf: StateKeyer };
  private readonly now: () => number;
  private readonly boundMs: number;

  constructor(
    shared: { state: SharedState; keyOf: StateKeyer },
    now: () => number,
    boundMs: number = RECENT_WRITES_BOUND_MS,
  ) {
    this.shared = shared;
    this.now = now;
    this.boundMs = boundMs;
  }

  /** The hashes an account's writes of this kind may be in: the current bucket first. */
  private keys(kind: Kind, accountId: number): [string, string] {
    const bucket = Math.floor(this.now() / this.boundMs);
    return [this.shared.keyOf('recent-writes', kind, accountId, bucket), this.shared.keyOf('recent-writes', kind, accountId, bucket - 1)];
  }

  /** Live entries, the newest per field. */
  private async entries<T>(kind: Kind, accountId: number, schema: z.ZodType<T & { at: number }>): Promise<Array<Entry<T>>> {
    const now = this.now();
    const newest = new Map<string, Entry<T>>();
    try {
      for (const key of this.keys(kind, accountId)) {
        for (const [field, text] of Object.entries(await this.shared.state.hashGetAll(key))) {
          const value = parseJson(text, schema);
          if (value === undefined || now - value.at >= this.boundMs) continue;
          const known = newest.get(field);
          if (!known || known.value.at < value.at) newest.set(field, { field, value });
        }
      }
    } catch {
      // The state failing: the list answers NerdGraph's view alone, as before the write.
      return [];
    }
    return [...newest.values()];
  }

  private async put(kind: Kind, accountId: number, field: string, value: object): Promise<void> {
    if (inRecordedRun()) return;
    try {
      await this.shared.state.hashSet(this.keys(kind, accountId)[0], { [field]: JSON.stringify({ ...value, at: this.now() }) }, 2 * this.boundMs);
    } catch {
      // The write is confirmed by NerdGraph whatever happens here: it is only not remembered.
    }
  }

  private async drop(kind: Kind, accountId: number, fields: readonly string[]): Promise<void> {
    if (fields.length === 0 || inRecordedRun()) return;
    try {
      for (const key of this.keys(kind, accountId)) await this.shared.state.hashDelete(key, fields);
    } catch {
      // Not dropped now: dropped on a later read, or by the bound.
    }
  }

  async rememberDeployment(accountId: number, deployment: RememberedDeployment): Promise<void> {
    await this.put('deployments', accountId, String(deployment.id), deployment);
  }

  /** The account's remembered deployments (of one application when `appId` is given). */
  async deployments(accountId: number, appId?: number): Promise<RememberedDeployment[]> {
    const entries = await this.entries('deployments', accountId, DeploymentEntry);
    return entries.flatMap(({ value: { at: _at, ...deployment } }) => (appId === undefined || deployment.appId === appId ? [deployment] : []));
  }

  /** NerdGraph shows these deployments now. */
  async forgetDeployments(accountId: number, ids: readonly number[]): Promise<void> {
    await this.drop('deployments', accountId, ids.map(String));
  }

  async rememberLabel(accountId: number, change: LabelChange): Promise<void> {
    const field = labelField(change);
    const earlier = (await this.entries('labels', accountId, LabelEntry)).find((entry) => entry.field === field);
    const untilBound = earlier !== undefined && earlier.value.op !== change.op;
    await this.put('labels', accountId, field, { ...change, untilBound });
  }

  /** The account's remembered label changes, the newest per application and label. */
  async labelChanges(accountId: number): Promise<RememberedLabelChange[]> {
    return (await this.entries('labels', accountId, LabelEntry)).map(({ value: { at: _at, ...change } }) => change);
  }

  /** NerdGraph shows these changes now. */
  async forgetLabels(accountId: number, changes: ReadonlyArray<Pick<LabelChange, 'appId' | 'category' | 'name'>>): Promise<void> {
    await this.drop('labels', accountId, changes.map(labelField));
  }
}

function parseJson<T>(text: string, schema: z.ZodType<T>): T | undefined {
  try {
    const parsed = schema.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}
