/**
 * The sandbox's alert issues and incidents (what REST v2 called incidents and violations):
 * clock-derived history on the sandbox's entities, bound to NRQL conditions of the alert store
 * (alerts.ts) so policy and condition names agree on both faces, plus the state that
 * acknowledge and close leave on top of it.
 *
 * History is a pure function of the clock: each "slot" (a condition on one to three targets)
 * opens an issue once per period, at an offset and for a duration drawn from a hash of
 * (slot, period index); an issue holds one to three incidents (one per target, a minute or
 * two apart). Nothing exists before `generatedAt - HISTORY_MS`, or after the clock. Which
 * conditions and targets the slots use is drawn once per world from its data (seeded), the
 * first time anything asks.
 *
 * Acknowledge and close are kept in a per-world overlay (never in the derived history): a
 * closed issue closes at the moment of the close, with its incidents still open then; later
 * incidents of that occurrence never open.
 *
 * Served on the NerdGraph face as `Account.aiIssues {issues, incidents}` (cursor pages of
 * AI_ISSUES_PAGE_SIZE, newest first), `Account.alerts {policiesSearch, nrqlConditionsSearch}`
 * and the mutations `aiIssuesAckIssue` / `aiIssuesResolveIssue` (ai-issues-fields.ts); on the
 * legacy face by legacy/ai-issues.ts.
 */
import { createHash } from 'node:crypto';
import { fnv1a32 } from './ids.ts';
import type { AlertCondition, AlertPolicy } from './alerts.ts';
import { createRandom } from './world/draws.ts';
import type { SandboxData } from './model.ts';

const MINUTE_MS = 60_000;
const HOUR_MS = 60 * MINUTE_MS;
const DAY_MS = 24 * HOUR_MS;

/** How far before the world's generation history starts. */
export const HISTORY_MS = 7 * DAY_MS;
/** NerdGraph's default timeWindow: the last 24 hours (nerdgraph.md §alerts). */
export const DEFAULT_TIME_WINDOW_MS = DAY_MS;
/** Items per aiIssues page (NerdGraph's own page size is undocumented; a choice). */
export const AI_ISSUES_PAGE_SIZE = 100;
/** Items per policiesSearch / nrqlConditionsSearch page (a choice). */
export const ALERTS_SEARCH_PAGE_SIZE = 200;
/** Slots per account: the primary account's give three and more v2 pages of incidents. */
const SLOTS = { primary: 40, other: 6 } as const;

export type AiPriority = 'CRITICAL' | 'HIGH';

/** An entity an incident is on. */
export interface AlertTarget {
  guid: string;
  name: string;
  /** NerdGraph's entity type (`APPLICATION`, `KEY_TRANSACTION`). */
  type: string;
}

interface Slot {
  accountId: number;
  index: number;
  policyId: number;
  conditionId: number;
  conditionName: string;
  hasWarning: boolean;
  targets: AlertTarget[];
  periodMs: number;
  phaseMs: number;
}

export interface SandboxIncident {
  accountId: number;
  incidentId: string;
  issueId: string;
  title: string;
  priority: AiPriority;
  createdAt: number;
  closedAt: number | null;
  policyId: number;
  conditionId: number;
  conditionName: string;
  target: AlertTarget;
}

export interface SandboxIssue {
  accountId: number;
  issueId: string;
  title: string;
  priority: AiPriority;
  createdAt: number;
  closedAt: number | null;
  acknowledgedAt: number | null;
  policyId: number;
  conditionId: number;
  conditionName: string;
  /** Oldest first. */
  incidents: SandboxIncident[];
}

interface IssuesWorld {
  slots: Slot[];
  /** issueId -> epoch ms of the close / acknowledge. */
  closed: Map<string, number>;
  acknowledged: Map<string, number>;
}

const worlds = new WeakMap<SandboxData, IssuesWorld>();

function uuidOf(text: string): string {
  const hex = createHash('sha256').update(text).digest('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-a${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

function targetsOf(data: SandboxData, accountId: number): AlertTarget[] {
  return [
    ...data.apps.filter((a) => a.accountId === accountId).map((a) => ({ guid: a.guid, name: a.name, type: 'APPLICATION' })),
    ...data.browserApps.filter((b) => b.accountId === accountId).map((b) => ({ guid: b.guid, name: b.name, type: 'APPLICATION' })),
    ...data.mobileApps.filter((m) => m.accountId === accountId).map((m) => ({ guid: m.guid, name: m.name, type: 'APPLICATION' })),
    ...data.keyTransactions.filter((k) => k.accountId === accountId).map((k) => ({ guid: k.guid, name: k.name, type: 'KEY_TRANSACTION' })),
  ];
}

function buildSlots(data: SandboxData): Slot[] {
  // Seeded by the world's own (seeded) ids, so the same seed draws the same slots.
  const random = createRandom(fnv1a32(`ai-issues|${data.apps.map((a) => a.id).slice(0, 8).join(',')}`));
  const slots: Slot[] = [];
  for (const [position, account] of data.accounts.entries()) {
    const conditions = data.alerts.conditions.filter((c) => c.accountId === account.id && c.family === 'alerts_nrql_conditions');
    const targets = targetsOf(data, account.id);
    if (conditions.length === 0 || targets.length === 0) continue;
    const wanted = position === 0 ? (data.primaryAlertSlots ?? SLOTS.primary) : SLOTS.other;
    const pool: AlertCondition[] = [...conditions];
    for (let index = 0; index < wanted && pool.length > 0; index++) {
      const condition = pool.splice(Math.floor(random() * pool.length), 1)[0] as AlertCondition;
      const count = 1 + Math.floor(random() * 3);
      const chosen = new Map<string, AlertTarget>();
      for (let n = 0; n < count; n++) {
        const target = targets[Math.floor(random() * targets.length)] as AlertTarget;
        chosen.set(target.guid, target);
      }
      const terms = Array.isArray(condition.fields.terms) ? condition.fields.terms : [];
      const periodMs = (6 + Math.floor(random() * 13)) * HOUR_MS;
      slots.push({
        accountId: account.id,
        index,
        policyId: condition.policyId,
        conditionId: condition.id,
        conditionName: typeof condition.fields.name === 'string' ? condition.fields.name : `Condition ${condition.id}`,
        hasWarning: terms.some((term) => typeof term === 'object' && term !== null && !Array.isArray(term) && term.priority === 'warning'),
        targets: [...chosen.values()],
        periodMs,
        phaseMs: Math.floor(random() * periodMs),
      });
    }
  }
  return slots;
}

function worldOf(data: SandboxData): IssuesWorld {
  let world = worlds.get(data);
  if (!world) {
    world = { slots: buildSlots(data), closed: new Map(), acknowledged: new Map() };
    worlds.set(data, world);
  }
  return world;
}

/** The natural (clock-derived) occurrence n of a slot, before the overlay and the clock. */
function occurrence(slot: Slot, n: number): SandboxIssue {
  const key = `${slot.accountId}|${slot.index}|${n}`;
  const h = fnv1a32(`occ|${key}`);
  const start = slot.phaseMs + n * slot.periodMs;
  const createdAt = Math.floor((start + (h % Math.floor(slot.periodMs / 2))) / 1000) * 1000;
  const long = fnv1a32(`long|${key}`) % 5 === 0;
  const span = long ? slot.periodMs * 3 : slot.periodMs / 2;
  const duration = 10 * MINUTE_MS + (fnv1a32(`dur|${key}`) % Math.floor(span / 1000)) * 1000;
  const priority: AiPriority = slot.hasWarning && fnv1a32(`pri|${key}`) % 3 === 0 ? 'HIGH' : 'CRITICAL';
  const issueId = uuidOf(`issue|${key}`);
  const incidents = slot.targets.map((target, j) => ({
    accountId: slot.accountId,
    incidentId: uuidOf(`incident|${key}|${j}`),
    issueId,
    title: `${slot.conditionName} violated on '${target.name}'`,
    priority,
    createdAt: createdAt + j * 2 * MINUTE_MS,
    closedAt: createdAt + duration - j * MINUTE_MS,
    policyId: slot.policyId,
    conditionId: slot.conditionId,
    conditionName: slot.conditionName,
    target,
  }));
  return {
    accountId: slot.accountId,
    issueId,
    title: (incidents[0] as SandboxIncident).title,
    priority,
    createdAt,
    closedAt: createdAt + duration,
    acknowledgedAt: null,
    policyId: slot.policyId,
    conditionId: slot.conditionId,
    conditionName: slot.conditionName,
    incidents,
  };
}

/** The occurrence as it stands at `now`: what exists yet, what closed, and the overlay. */
function asOf(world: IssuesWorld, natural: SandboxIssue, now: number): SandboxIssue {
  const closedBy = world.closed.get(natural.issueId);
  const until = closedBy ?? Number.POSITIVE_INFINITY;
  const incidents = natural.incidents
    .filter((incident) => incident.createdAt <= now && incident.createdAt <= until)
    .map((incident) => {
      const end = Math.min(incident.closedAt ?? Number.POSITIVE_INFINITY, until);
      return { ...incident, closedAt: end <= now ? end : null };
    });
  const end = Math.min(natural.closedAt ?? Number.POSITIVE_INFINITY, until);
  return { ...natural, incidents, closedAt: end <= now ? end : null, acknowledgedAt: world.acknowledged.get(natural.issueId) ?? null };
}

/**
 * The account's issues created in [from, to] as of `now`, newest first (ties by issueId):
 * the one list both faces read.
 */
export function issuesOf(data: SandboxData, accountId: number, from: number, to: number, now: number): SandboxIssue[] {
  const world = worldOf(data);
  const start = Math.max(from, data.generatedAt - HISTORY_MS);
  const end = Math.min(to, now);
  const issues: SandboxIssue[] = [];
  if (start > end) return issues;
  for (const slot of world.slots) {
    if (slot.accountId !== accountId) continue;
    const first = Math.floor((start - slot.phaseMs) / slot.periodMs) - 1;
    const last = Math.floor((end - slot.phaseMs) / slot.periodMs);
    for (let n = first; n <= last; n++) {
      const natural = occurrence(slot, n);
      if (natural.createdAt < start || natural.createdAt > end) continue;
      issues.push(asOf(world, natural, now));
    }
  }
  return issues.sort((a, b) => b.createdAt - a.createdAt || (a.issueId < b.issueId ? -1 : a.issueId > b.issueId ? 1 : 0));
}

/** Every incident of the account created in [from, to] as of `now`, newest first (ties by incidentId). */
export function incidentsOf(data: SandboxData, accountId: number, from: number, to: number, now: number): SandboxIncident[] {
  // An incident opens at most a few minutes after its issue: widen the issue window by that.
  const incidents = issuesOf(data, accountId, from - HOUR_MS, to, now)
    .flatMap((issue) => issue.incidents)
    .filter((incident) => incident.createdAt >= from && incident.createdAt <= to);
  return incidents.sort((a, b) => b.createdAt - a.createdAt || (a.incidentId < b.incidentId ? -1 : a.incidentId > b.incidentId ? 1 : 0));
}

/** The whole history of the account as of `now`. */
export function allIssuesOf(data: SandboxData, accountId: number, now: number): SandboxIssue[] {
  return issuesOf(data, accountId, Number.NEGATIVE_INFINITY, Number.POSITIVE_INFINITY, now);
}

export function acknowledgeIssue(data: SandboxData, issueId: string, now: number): void {
  const world = worldOf(data);
  if (!world.acknowledged.has(issueId)) world.acknowledged.set(issueId, now);
}

export function closeIssue(data: SandboxData, issueId: string, now: number): void {
  const world = worldOf(data);
  if (!world.closed.has(issueId)) world.closed.set(issueId, now);
}

export const policyOf = (data: SandboxData, accountId: number, id: number): AlertPolicy | undefined =>
  data.alerts.policies.find((policy) => policy.accountId === accountId && policy.id === id);
