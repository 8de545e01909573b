import { ID_PATTERN, type FieldNote, type KnownGap, checkedParse, fieldNotesUnder, parseAnswer, type V2Body, decodeEntityGuid } from '../../src/mapping-api.ts';
import { z } from 'zod';
import { healthStatus, startOfMinute } from '../common/entity-health.ts';
import { idFromGuid } from '../common/created-app.ts';
import { UNSCOPED_ROWS_ASSUMPTION } from '../common/metric-values.ts';
import { keyTransactionSumsQuery } from './key-transaction-queries.ts';
import { CURRENT_WINDOW_MS, currentWindow } from '../common/topology-queries.ts';
import { EntityOutline } from '../common/entity-schemas.ts';
import { KEY_TRANSACTION_TITLES } from '../../facts/v2-titles.ts';
import { KEY_TRANSACTION_LINKS } from '../../facts/v2-values.ts';

/**
 * A key transaction entity (KeyTransactionFields) and its 10-minute sums reshaped into v2's
 * key transaction object (rest-v2-shapes.md §6, routes-next.md §2). Shared by list and show.
 */
export const KEY_TRANSACTION_NOT_FOUND = KEY_TRANSACTION_TITLES.notFound;
export const KEY_TRANSACTION_TOP_LINKS: V2Body = KEY_TRANSACTION_LINKS;

/** v2 summarised key transactions over the last 10 minutes (routes-next.md §0): the current window. */
const SUMMARY_MINUTES = CURRENT_WINDOW_MS / 60_000;

export const KeyTransactionEntity = EntityOutline.extend({
  apdexTarget: z.number(),
  browserApdexTarget: z.number().nullable().optional(),
  metricName: z.string(),
  application: z.object({
    guid: z.string(),
    entity: z.object({ guid: z.string(), accountId: z.number().int(), applicationId: z.number().int().optional() }).nullable().optional(),
  }),
});
export type KeyTransactionEntity = z.infer<typeof KeyTransactionEntity>;

/**
 * A key transaction entity of an answer, its parent app entity kept only when `inAccount` says
 * it is in the caller's account (anything else is not shown); undefined when the entity is not
 * one. A copy when the parent is dropped: the parsed entity is never changed, as it may be the
 * answer's own object (frozen by the micro-cache).
 */
export function keyTransactionOf(entity: unknown, inAccount: (entity: unknown) => boolean): KeyTransactionEntity | undefined {
  const parsed = checkedParse(KeyTransactionEntity, entity);
  if (!parsed.success) return undefined;
  const kt = parsed.data;
  const parent = kt.application.entity;
  if (!parent || inAccount(parent)) return kt;
  return { ...kt, application: { ...kt.application, entity: null } };
}

/** The NRQL sums of one KT (keyTransactionSumsQuery). */
export interface KeyTransactionSums {
  calls: number;
  callTime: number;
  apdexS: number;
  apdexT: number;
  apdexF: number;
}

const SumsRow = z.object({
  facet: z.unknown(),
  'entity.guid': z.string().optional(),
  calls: z.number().nullable(),
  call_time: z.number().nullable(),
  apdex_s: z.number().nullable(),
  apdex_t: z.number().nullable(),
  apdex_f: z.number().nullable(),
});
// Built once: its compiled check (and zod's own) is kept per schema object.
const SumsRows = z.array(SumsRow);
export const NrqlResults = z.object({ results: z.array(z.unknown()) });

export function summaryQuery(guids: readonly string[], now: number): string {
  return keyTransactionSumsQuery({ guids, ...currentWindow(now) });
}

/** The summary rows by KT GUID; a KT without rows in the window has none. */
export function sumsByGuid(results: unknown, operation: string): Map<string, KeyTransactionSums> {
  const rows = parseAnswer(SumsRows, results, operation);
  const sums = new Map<string, KeyTransactionSums>();
  for (const row of rows) {
    const guid = row['entity.guid'] ?? (typeof row.facet === 'string' ? row.facet : undefined);
    if (guid === undefined) continue;
    sums.set(guid, { calls: row.calls ?? 0, callTime: row.call_time ?? 0, apdexS: row.apdex_s ?? 0, apdexT: row.apdex_t ?? 0, apdexF: row.apdex_f ?? 0 });
  }
  return sums;
}

const round2 = (value: number): number => Math.round(value * 100) / 100;

/**
 * v2's transaction_name from NerdGraph's metricName: the metric without its first two segments
 * (`WebTransaction/<naming scheme>`); a URI-named transaction reads as its path
 * (`WebTransaction/Uri/kt/checkout` -> `/kt/checkout`), any other as its name
 * (`WebTransaction/Custom/Login Page` -> `Login Page`, as v2 showed it). The reference leaves the
 * transformation UNCONFIRMED (routes-next.md §10 item 2; probe: v2-key-transaction-name-rule);
 * shorter names are kept as is.
 */
export function transactionNameOf(metricName: string): string {
  const segments = metricName.split('/');
  if (segments.length <= 2) return metricName;
  const rest = segments.slice(2).join('/');
  return segments[1] === 'Uri' ? `/${rest}` : rest;
}

/**
 * The parent app's v2 id: the related entity's applicationId, else the id in its GUID when that
 * GUID is of the KT's own account (a KT lives in its app's account; anything else is not shown).
 */
function applicationIdOf(kt: KeyTransactionEntity): number | null {
  const fromEntity = kt.application.entity?.applicationId;
  if (fromEntity !== undefined) return fromEntity;
  const decoded = decodeEntityGuid(kt.application.guid);
  if (decoded?.accountId !== kt.accountId) return null;
  return ID_PATTERN.test(decoded.domainId) ? Number(decoded.domainId) : null;
}

export function reshapeKeyTransaction(kt: KeyTransactionEntity, sums: KeyTransactionSums | undefined, now: number): V2Body {
  const reporting = kt.reporting === true;
  const body: V2Body = {
    id: idFromGuid(kt.guid),
    name: kt.name,
    transaction_name: transactionNameOf(kt.metricName),
    health_status: healthStatus(reporting, kt.alertSeverity),
    reporting,
  };
  // Every key v2 sent, null where there is nothing to say: a client reads
  // `kt['application_summary']['apdex_score']` whether or not the KT reports (v2: no timestamp once
  // not reporting, rest-v2.md §3.3; whether the key was then null or absent is UNCONFIRMED;
  // no probe: only a live non-reporting key transaction read on v2 shows it, and the probe samples reporting ones).
  body.last_reported_at = reporting ? startOfMinute(now) : null;
  const s = sums ?? { calls: 0, callTime: 0, apdexS: 0, apdexT: 0, apdexF: 0 };
  const samples = s.apdexS + s.apdexT + s.apdexF;
  body.application_summary = {
    response_time: reporting && s.calls > 0 ? round2((s.callTime / s.calls) * 1000) : null,
    throughput: reporting ? round2(s.calls / SUMMARY_MINUTES) : null,
    error_rate: null,
    apdex_target: kt.apdexTarget,
    apdex_score: reporting && samples > 0 ? round2((s.apdexS + s.apdexT / 2) / samples) : null,
  };
  body.end_user_summary = { response_time: null, throughput: null, apdex_target: kt.browserApdexTarget ?? null, apdex_score: null };
  body.links = { application: applicationIdOf(kt) };
  return body;
}

export function keyTransactionFields(prefix: string): FieldNote[] {
  const f = fieldNotesUnder(prefix);
  return [
    f('id', 'exact', 'the domain id in the KT GUID'),
    f('name', 'exact', 'name'),
    f('transaction_name', 'approximate', 'metricName without its first two segments; a path for URI-named transactions (rule UNCONFIRMED; probe: v2-key-transaction-name-rule)'),
    f('health_status', 'approximate', 'alertSeverity as for applications; gray when not reporting'),
    f('reporting', 'exact', 'reporting'),
    f('last_reported_at', 'approximate', 'no NerdGraph field: start of the current minute while reporting, null otherwise'),
    f('application_summary.response_time', 'approximate', 'NRQL on entity.guid, last 10 minutes: sum / count of the call rows x 1000, 2 decimals; null when not reporting or without calls'),
    f('application_summary.throughput', 'approximate', 'NRQL: call rows count / 10 (per minute), 2 decimals; null when not reporting'),
    f('application_summary.error_rate', 'unsupported', 'no per-transaction error source: null'),
    f('application_summary.apdex_target', 'exact', 'apdexTarget'),
    f('application_summary.apdex_score', 'approximate', 'NRQL on the Apdex rows: (S + T/2) / (S + T + F), 2 decimals; null when not reporting or without samples'),
    f('end_user_summary.apdex_target', 'exact', 'browserApdexTarget; null when the parent app has no browser monitoring'),
    f('end_user_summary.response_time', 'unsupported', 'no source: null'),
    f('end_user_summary.throughput', 'unsupported', 'no source: null'),
    f('end_user_summary.apdex_score', 'unsupported', 'no source: null'),
    f('links.application', 'exact', 'application.entity.applicationId, else the id in application.guid when of the same account, else null'),
  ];
}

export function keyTransactionGaps(prefix: string): KnownGap[] {
  return [
    { path: `${prefix}.application_summary.error_rate`, description: 'No NerdGraph source gives a key transaction\'s error rate: error_rate is null.' },
    { path: `${prefix}.end_user_summary.response_time`, description: 'No NerdGraph source gives a key transaction\'s browser response time: null.' },
    { path: `${prefix}.end_user_summary.throughput`, description: 'No NerdGraph source gives a key transaction\'s browser throughput: null.' },
    { path: `${prefix}.end_user_summary.apdex_score`, description: 'No NerdGraph source gives a key transaction\'s browser apdex score: null.' },
    { description: 'last_reported_at has no NerdGraph field: while reporting it is the start of the current minute, otherwise null.' },
    {
      description:
        'A key transaction that is not reporting still sends application_summary and end_user_summary, their values null but the apdex targets (settings); v2 may have left the blocks out (UNCONFIRMED: no capture of a non-reporting key transaction; no probe: the route comparison of npm run probe reads a live key transaction\'s keys, and shows this only where the one it samples is not reporting).',
    },
  ];
}

export const KEY_TRANSACTION_ASSUMPTIONS: readonly string[] = [
  UNSCOPED_ROWS_ASSUMPTION,
  "KT timeslices queryable by the KT's entity.guid (UNCONFIRMED; probe: key-transaction-rows-carry-entity-guid): `FROM Metric WHERE entity.guid IN (<KT GUIDs>) FACET entity.guid` returns the parent app's rows of metricName and `Apdex/<metricName without its first segment>`.",
  'Summaries cover the last 10 whole minutes (v2: a rolling 10-minute average); response_time, throughput and apdex_score are rounded to 2 decimals.',
  'transaction_name is metricName without its first two segments: a path for URI-named transactions (`WebTransaction/Uri/kt/checkout` -> `/kt/checkout`), the name itself otherwise (`WebTransaction/Custom/Login Page` -> `Login Page`); the transformation is UNCONFIRMED (probe: v2-key-transaction-name-rule).',
  'A non-reporting key transaction sends last_reported_at null and both summaries with null values (the apdex targets kept): every key v2 documented is present (rest-v2-shapes.md §6); whether v2 then omitted the blocks is UNCONFIRMED (no probe: it shows only in the v2 answer for a live non-reporting key transaction, which the probe cannot choose to have).',
  'end_user_summary is always sent: apdex_target is browserApdexTarget (null without browser monitoring); no NerdGraph source gives a key transaction\'s browser response time, throughput or apdex score, so they are null.',
];
