/**
 * How the legacy alert routes (alerts.ts) answer: v2 bodies of policies and conditions, a strong
 * ETag on reads (If-None-Match: a bodiless 304), v2's X-RateLimit-* headers on every answer,
 * errors included (rest-v2.md §3.11: reported, never enforced), pages of 50 with the Link
 * header (the page size is UNCONFIRMED), and lookups scoped to the caller's account.
 */
import { createHash } from 'node:crypto';
import { V2Error, notFound, CONTENT_TYPES, serialise, type V2Body } from './wire.ts';
import { conditionEntityGuid, type AlertCondition, type AlertFamily, type AlertPolicy } from '../alerts.ts';
import type { SandboxData } from '../model.ts';
import { CACHE_CONTROL, etagMatches, invalid, pageOf, type LegacyRequest, type LegacyRoute } from './common.ts';
import { AlertTitles } from './alert-bodies.ts';

/** v2's alerts page size is UNCONFIRMED; the sandbox pages every alert list by 50. */
export const ALERTS_PAGE_SIZE = 50;
/** v2's documented limit: 1,000 calls per minute per key (reported, not enforced here). */
export const RATE_LIMIT_PER_MINUTE = 1000;
// ---------------------------------------------------------------------------------------------
// Answers: v2 bodies, the ETag on reads, the rate-limit headers on everything.

/** `showCustom` off (behaviour legacyShowsCustomPreference, test-only): CUSTOM reads as v2's default. */
export const policyBody = (policy: AlertPolicy, showCustom = true): V2Body => ({
  id: policy.id,
  incident_preference: policy.incidentPreference === 'CUSTOM' && !showCustom ? 'PER_POLICY' : policy.incidentPreference,
  name: policy.name,
  created_at: policy.createdAt,
  updated_at: policy.updatedAt,
});
/**
 * A condition in v2's key order: `id` first, except NRQL conditions, which v2 sent `type` first and
 * `entity_guid` last (newrelic-client-go pkg/alerts/nrql_conditions_test.go; XML clients see the order).
 */
export function conditionBody(condition: AlertCondition): V2Body {
  const fields = structuredClone(condition.fields);
  if (condition.family !== 'alerts_nrql_conditions') return { id: condition.id, ...fields };
  const { type, ...rest } = fields;
  return { ...(type !== undefined && { type }), id: condition.id, ...rest, entity_guid: conditionEntityGuid(condition) };
}
/** A read: 200 with a strong ETag over the body, or a bodiless 304 when the client has it. */
export function read(req: LegacyRequest, body: V2Body, headers: Record<string, string> = {}): Response {
  const text = serialise(body, req.format);
  const etag = `"${createHash('sha256').update(text).digest('base64url')}"`;
  const common = { etag, 'cache-control': CACHE_CONTROL, ...headers };
  if (etagMatches(req.ifNoneMatch, etag)) return new Response(null, { status: 304, headers: common });
  return new Response(text, { status: 200, headers: { 'content-type': CONTENT_TYPES[req.format], ...common } });
}

export function written(req: LegacyRequest, status: 200 | 201, body: V2Body): Response {
  return new Response(serialise(body, req.format), { status, headers: { 'content-type': CONTENT_TYPES[req.format] } });
}

/** Calls per key in the current minute, per sandbox world. */
const rateWindows = new WeakMap<SandboxData, Map<string, { minute: number; calls: number }>>();

/** v2's X-RateLimit-* headers: counted per key per clock minute, reported but never enforced. */
function rateLimitHeaders(req: LegacyRequest): Record<string, string> {
  let windows = rateWindows.get(req.data);
  if (!windows) rateWindows.set(req.data, (windows = new Map()));
  const key = (req.request.headers.get('x-api-key') ?? req.request.headers.get('api-key') ?? '').trim();
  const minute = Math.floor(req.now / 60_000);
  const window = windows.get(key);
  const calls = window && window.minute === minute ? window.calls + 1 : 1;
  windows.set(key, { minute, calls });
  return {
    'x-ratelimit-limit': String(RATE_LIMIT_PER_MINUTE),
    'x-ratelimit-remaining': String(Math.max(0, RATE_LIMIT_PER_MINUTE - calls)),
    'x-ratelimit-reset': String((minute + 1) * 60),
  };
}

/** One alert route: its answer, and any v2 error it throws, carry the rate-limit headers. */
export function alertRoute(template: string, method: 'GET' | 'POST' | 'PUT' | 'DELETE', handler: (req: LegacyRequest) => Response | Promise<Response>): LegacyRoute {
  return {
    template,
    methods: [method],
    // Writes read their own body (or only the query string, for entity conditions).
    ...(method !== 'GET' && { body: 'own' as const }),
    handler: async (req) => {
      const limits = rateLimitHeaders(req);
      try {
        const response = await handler(req);
        for (const [name, value] of Object.entries(limits)) response.headers.set(name, value);
        return response;
      } catch (error) {
        if (!(error instanceof V2Error)) throw error;
        throw new V2Error(error.status, error.title, { headers: { ...error.headers, ...limits }, ...(error.messages && { messages: error.messages }) });
      }
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Lookups, scoped to the caller's account.

export function idOf(raw: string | undefined, key: string): number {
  const value = raw?.trim() ?? '';
  if (!/^[1-9]\d{0,14}$/.test(value)) throw invalid(AlertTitles.idInvalid(key));
  return Number(value);
}

export function policyIn(req: LegacyRequest, raw: string | undefined): AlertPolicy {
  const id = /^[1-9]\d{0,14}$/.test(raw ?? '') ? Number(raw) : undefined;
  const policy = id === undefined ? undefined : req.data.alerts.policies.find((p) => p.id === id && p.accountId === req.accountId);
  if (!policy) throw notFound(AlertTitles.policyNotFound);
  return policy;
}

export function conditionIn(req: LegacyRequest, family: AlertFamily, raw: string | undefined): AlertCondition {
  const id = /^[1-9]\d{0,14}$/.test(raw ?? '') ? Number(raw) : undefined;
  const condition =
    id === undefined ? undefined : req.data.alerts.conditions.find((c) => c.id === id && c.family === family && c.accountId === req.accountId);
  if (!condition) throw notFound(AlertTitles.conditionNotFound);
  return condition;
}

/** One page of `items` under `wrapper`, with v2's Link header. */
export function page<T>(req: LegacyRequest, items: readonly T[], wrapper: string, render: (item: T) => V2Body): Response {
  const number = pageOf(req.params);
  const lastPage = Math.ceil(items.length / ALERTS_PAGE_SIZE);
  const shown = items.slice((number - 1) * ALERTS_PAGE_SIZE, number * ALERTS_PAGE_SIZE).map(render);
  const link = req.link(number, lastPage);
  return read(req, { [wrapper]: shown }, link ? { link } : {});
}

export const byId = <T extends { id: number }>(a: T, b: T): number => a.id - b.id;
