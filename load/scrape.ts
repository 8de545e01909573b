/**
 * What the load run reads from a gateway's /metrics: v2 requests by status, NerdGraph calls,
 * memory, and (for the replica mode) the shared state's fallbacks and the budgets' decisions.
 * Series a gateway does not have yet read as 0.
 */
export interface Scrape {
  /** v2 requests (not /metrics, /healthz, /readyz) by status. */
  byStatus: Map<number, number>;
  upstream: number;
  rss: number | undefined;
  heapUsed: number | undefined;
  /** Shared-state operations served from memory because Redis failed (v2bridge_shared_state_fallbacks_total). */
  stateFallbacks: number;
  /** 1 while the replica keeps its state in memory (v2bridge_shared_state_degraded). */
  stateDegraded: number;
  /** NerdGraph budget decisions, `budget/result` -> count (v2bridge_budget_decisions_total). */
  budgetDecisions: Map<string, number>;
}

export async function scrape(base: string): Promise<Scrape> {
  const text = await (await fetch(`${base}/metrics`)).text();
  const byStatus = new Map<number, number>();
  for (const m of text.matchAll(/^v2bridge_http_requests_total\{route="([^"]*)",method="[^"]*",status="(\d+)"\}\s+(\S+)$/gm)) {
    if (['/metrics', '/healthz', '/readyz'].includes(m[1] ?? '')) continue;
    const status = Number(m[2]);
    byStatus.set(status, (byStatus.get(status) ?? 0) + Number(m[3]));
  }
  const sum = (name: string): number => {
    let n = 0;
    for (const m of text.matchAll(new RegExp(`^${name}(?:\\{[^}]*\\})?\\s+(\\S+)$`, 'gm'))) n += Number(m[1]);
    return n;
  };
  const gauge = (name: string): number | undefined => {
    const value = new RegExp(`^${name}\\s+(\\S+)$`, 'm').exec(text)?.[1];
    return value === undefined ? undefined : Number(value);
  };
  const budgetDecisions = new Map<string, number>();
  for (const m of text.matchAll(/^v2bridge_budget_decisions_total\{([^}]*)\}\s+(\S+)$/gm)) {
    const labels = m[1] ?? '';
    const budget = /budget="([^"]*)"/.exec(labels)?.[1] ?? '?';
    const result = /result="([^"]*)"/.exec(labels)?.[1] ?? '?';
    const name = `${budget}/${result}`;
    budgetDecisions.set(name, (budgetDecisions.get(name) ?? 0) + Number(m[2]));
  }
  return {
    byStatus,
    upstream: sum('v2bridge_upstream_requests_total'),
    rss: gauge('v2bridge_process_resident_memory_bytes'),
    heapUsed: gauge('v2bridge_nodejs_heap_size_used_bytes'),
    stateFallbacks: sum('v2bridge_shared_state_fallbacks_total'),
    stateDegraded: gauge('v2bridge_shared_state_degraded') ?? 0,
    budgetDecisions,
  };
}

export const total = (m: Map<number, number>, keep: (status: number) => boolean = () => true): number =>
  [...m].reduce((n, [status, count]) => (keep(status) ? n + count : n), 0);

/** after - before, per entry, keeping only entries that grew. */
export function delta<K>(before: Map<K, number>, after: Map<K, number>): Map<K, number> {
  const out = new Map<K, number>();
  for (const [status, count] of after) {
    const d = count - (before.get(status) ?? 0);
    if (d > 0) out.set(status, d);
  }
  return out;
}

/** Entries of several maps added up. */
export function merge<K>(maps: ReadonlyArray<Map<K, number>>): Map<K, number> {
  const out = new Map<K, number>();
  for (const map of maps) for (const [k, n] of map) out.set(k, (out.get(k) ?? 0) + n);
  return out;
}

export const mb = (bytes: number | undefined): string => (bytes === undefined ? 'n/a' : `${(bytes / 1024 / 1024).toFixed(0)} MB`);
export const breakdown = (m: Map<number, number>): string => ([...m].sort(([a], [b]) => a - b).map(([s, n]) => `${s}: ${n}`).join(', ') || 'none');
