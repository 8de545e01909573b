import type { ProbeContext, SharedReads } from './probes.ts';
import type { Verdict } from './report.ts';

/** What the probes that read v2 share (v2-probes.ts, v2-alert-probes.ts): the two sides and reading their answers. */
export interface V2Side {
  /** A request to the legacy API (key and account headers added by the caller). */
  legacy(path: string, init?: { method: 'POST'; form: string }): Promise<Response>;
  /** A GET through the translation. */
  translate(path: string): Promise<Response>;
  /** The documented gaps' field patterns of a mapping (by route template and method). */
  gapsOf(route: string): readonly string[];
}

export interface V2Probe {
  name: string;
  checks: string;
  settles: string;
  run(ctx: ProbeContext, shared: SharedReads, v2: V2Side | null): Promise<{ verdict: Verdict; evidence: string }>;
}

export const NO_LEGACY = 'no legacy API compared (set LEGACY_REST_URL while it answers)';
export const ok = (status: number): boolean => status >= 200 && status < 300;
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export const isRecord = (value: unknown): value is Record<string, Json> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** A 2xx JSON answer's body, or the status it answered instead. */
export async function bodyOf(answer: Promise<Response>): Promise<{ status: number; body?: Record<string, Json> }> {
  const response = await answer;
  const text = await response.text();
  if (!ok(response.status)) return { status: response.status };
  try {
    const body: unknown = JSON.parse(text);
    return isRecord(body) ? { status: response.status, body } : { status: response.status };
  } catch {
    return { status: response.status };
  }
}

export const listIn = (body: Record<string, Json> | undefined, wrapper: string): Array<Record<string, Json>> => {
  const items = body?.[wrapper];
  return Array.isArray(items) ? items.filter(isRecord) : [];
};

/** Policies of the legacy list's first page searched for conditions (one list call each). */
export const POLICIES_SEARCHED = 25;

export async function legacyPolicies(v2: V2Side): Promise<{ status: number; ids: string[] }> {
  const { status, body } = await bodyOf(v2.legacy('/v2/alerts_policies.json'));
  return { status, ids: listIn(body, 'policies').flatMap((policy) => (typeof policy.id === 'number' || typeof policy.id === 'string' ? [String(policy.id)] : [])).slice(0, POLICIES_SEARCHED) };
}
