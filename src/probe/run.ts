import { redactKeys } from '../ops/redact.ts';
import { createMetrics } from '../ops/metrics.ts';
import type { Mapping } from '../routes/mapping.ts';
import { createNerdGraphClient } from '../upstream/client.ts';
import { loadDocuments, type OperationDocument } from '../upstream/documents.ts';
import { PROBE_OPERATIONS, SharedReads, runProbes, type ProbeContext, type ProbeOperation } from './probes.ts';
import { runV2Probes, type V2Side } from './v2-probes.ts';
import type { ProbeReport } from './report.ts';
import { LEGACY_PROBES, judgeLegacyProbe } from './legacy-probes.ts';
import { compareReadRoutes } from './routes.ts';

/**
 * One run of `npm run probe` (scripts/probe.ts), in process so tests run it against the
 * sandbox: the named probes over NerdGraph and, with a legacy API, the read routes compared.
 * Read-only by construction: the NerdGraph client it builds knows only the probe documents,
 * each checked to be a query, so no mutation can be sent; the legacy API gets GETs and one POST
 * of a query form (v2-probes.ts) to a route v2 documents no write for.
 */
export interface ProbeRunOptions {
  nerdgraphUrl: string;
  apiKey: string;
  accountId: number;
  now?: () => number;
  /** Bound on each NerdGraph call (retries included). */
  timeoutMs?: number;
  /** Compare the read routes with this legacy API through the translation `translate`. */
  legacy?: {
    url: string;
    mappings: readonly Mapping[];
    translate(path: string, headers: Record<string, string>): Promise<Response>;
    /** Only the routes whose template this accepts (default: every read route). */
    only?: (template: string) => boolean;
  };
}

/** The probe's documents: queries/Probe*.graphql only, and queries only. */
export function probeDocuments(): Map<string, OperationDocument> {
  const all = loadDocuments();
  const documents = new Map<string, OperationDocument>();
  for (const name of PROBE_OPERATIONS) {
    const document = all.get(name);
    if (document === undefined) throw new Error(`queries/${name}.graphql is missing`);
    if (document.kind !== 'query') throw new Error(`queries/${name}.graphql must be a query: the probe is read-only`);
    documents.set(name, document);
  }
  return documents;
}

/** A URL as safe to show: no user, password, query or fragment. */
function shownUrl(text: string): string {
  try {
    const url = new URL(text);
    return `${url.origin}${url.pathname}`;
  } catch {
    return '(invalid URL)';
  }
}

/** The legacy API and the translation as the probes that read v2 see them (src/probe/v2-probes.ts). */
function v2Side(legacy: NonNullable<ProbeRunOptions['legacy']>, options: Pick<ProbeRunOptions, 'apiKey' | 'accountId' | 'timeoutMs'>): V2Side {
  const headers = { 'X-Api-Key': options.apiKey, 'X-Account-Id': String(options.accountId), Accept: 'application/json' };
  const base = legacy.url.replace(/\/+$/, '');
  return {
    legacy: (path, init) =>
      fetch(`${base}${path}`, {
        headers: init ? { ...headers, 'Content-Type': 'application/x-www-form-urlencoded' } : headers,
        ...(init && { method: init.method, body: init.form }),
        signal: AbortSignal.timeout(options.timeoutMs ?? 30_000),
        redirect: 'manual',
      }),
    translate: (path) => legacy.translate(path, headers),
    gapsOf: (route) => legacy.mappings.filter((mapping) => mapping.route === route && mapping.method === 'GET').flatMap((mapping) => mapping.knownGaps.flatMap((gap) => (gap.path === undefined ? [] : [gap.path]))),
  };
}

export async function runProbe(options: ProbeRunOptions): Promise<ProbeReport> {
  const now = options.now ?? Date.now;
  const documents = probeDocuments();
  const client = createNerdGraphClient({ url: options.nerdgraphUrl, documents, metrics: createMetrics(), timeoutMs: options.timeoutMs ?? 60_000, retries: 1 });
  const redact = (text: string): string => redactKeys(text.split(options.apiKey).join('[redacted]'));
  const read = (operation: ProbeOperation, variables: Record<string, unknown>): Promise<unknown> => {
    if (!documents.has(operation)) return Promise.reject(new Error(`not a probe document: ${operation}`));
    return client.call({ operation, variables, apiKey: options.apiKey });
  };
  const ctx: ProbeContext = { accountId: options.accountId, now: now(), read };
  const shared = new SharedReads(ctx);
  const probes = await runProbes(ctx, redact, shared);
  probes.push(...(await runV2Probes(ctx, shared, options.legacy ? v2Side(options.legacy, options) : null, redact)));
  let legacy: ProbeReport['legacy'] = null;
  if (options.legacy) {
    const outcome = await compareReadRoutes({
      mappings: options.legacy.mappings,
      legacyUrl: options.legacy.url,
      apiKey: options.apiKey,
      accountId: options.accountId,
      now: now(),
      translate: options.legacy.translate,
      ...(options.legacy.only && { only: options.legacy.only }),
    });
    legacy = {
      url: shownUrl(options.legacy.url),
      unavailable: outcome.unavailable === null ? null : redact(outcome.unavailable),
      routes: outcome.routes.map((route) => ({ ...route, request: redact(route.request), outcome: redact(route.outcome) })),
    };
  }
  // What only the legacy API can settle, read from the route comparisons (unknown without them).
  for (const probe of LEGACY_PROBES) probes.push(judgeLegacyProbe(probe, legacy));
  return { at: new Date(now()).toISOString(), accountId: options.accountId, nerdgraph: shownUrl(options.nerdgraphUrl), probes, legacy };
}
