import { readFile, writeFile } from 'node:fs/promises';
import { z } from 'zod';

/**
 * What `npm run probe` reports (src/probe/): one verdict per named probe, and per read route
 * whether the translation agreed with the legacy API. The JSON it writes is read back by
 * /bridge/ (src/bridge/page.ts), so it is validated here at that edge too. Nothing in a report
 * holds an API key: evidence is numbers, ids, names and counts.
 */
export const VERDICTS = ['confirmed', 'refuted', 'unknown'] as const;
export type Verdict = (typeof VERDICTS)[number];

export const ProbeResult = z.object({
  /** Stable name, e.g. `key-transaction-rows-carry-entity-guid`. */
  name: z.string(),
  /** What the probe checks, in one sentence. */
  checks: z.string(),
  /** The mapping assumption it settles (where the gateway relies on the fact). */
  settles: z.string(),
  verdict: z.enum(VERDICTS),
  /** Numbers and ids that justify the verdict (never a key). */
  evidence: z.string(),
});
export type ProbeResult = z.infer<typeof ProbeResult>;

export const RouteComparison = z.object({
  /** Route template, e.g. `/v2/applications/{id}.{format}`. */
  route: z.string(),
  /** The sampled request: path and query (no key). */
  request: z.string(),
  /**
   * agree: both sides answered 2xx and the compare engine found nothing but gaps, noise and
   * tolerances; disagree: mismatches; unknown: a side answered other than 2xx, so no answer was
   * compared (two alike 422s agree on nothing); error: a side failed.
   */
  result: z.enum(['agree', 'disagree', 'unknown', 'error', 'skipped']),
  /** The compare engine's outcome (match, noise, mismatch, error), or why the route was skipped. */
  outcome: z.string(),
  status: z.object({ legacy: z.number().nullable(), translated: z.number().nullable() }),
  /** Field patterns that differ (mismatches), at most 50. */
  differing: z.array(z.string()),
});
export type RouteComparison = z.infer<typeof RouteComparison>;

export const ProbeReport = z.object({
  /** ISO time the probe finished. */
  at: z.string(),
  accountId: z.number().int(),
  /** The NerdGraph endpoint probed (a URL without credentials). */
  nerdgraph: z.string(),
  probes: z.array(ProbeResult),
  /** null when no legacy API was compared (LEGACY_REST_URL unset, or it did not answer). */
  legacy: z
    .object({
      url: z.string(),
      /** Why nothing was compared, when the legacy API did not answer. */
      unavailable: z.string().nullable(),
      routes: z.array(RouteComparison),
    })
    .nullable(),
});
export type ProbeReport = z.infer<typeof ProbeReport>;

/** Where `npm run probe` writes, and /bridge/ reads, by default (relative to the working directory). */
export const DEFAULT_PROBE_REPORT_PATH = 'probe-report.json';

/** One line per probe and per compared route, for the terminal. */
export function formatReport(report: ProbeReport): string {
  const lines = report.probes.map((probe) => `${probe.verdict.padEnd(9)} ${probe.name}: ${probe.evidence}`);
  if (report.legacy !== null) {
    if (report.legacy.unavailable !== null) lines.push(`legacy    not compared: ${report.legacy.unavailable}`);
    for (const route of report.legacy.routes) {
      const differing = route.differing.length > 0 ? ` (${route.differing.join(', ')})` : '';
      lines.push(`${route.result.padEnd(9)} GET ${route.route}: ${route.outcome}, legacy ${route.status.legacy ?? '-'} / translated ${route.status.translated ?? '-'}${differing}`);
    }
  }
  return `${lines.join('\n')}\n`;
}

export async function writeReport(path: string, report: ProbeReport): Promise<void> {
  await writeFile(path, `${JSON.stringify(report, null, 2)}\n`, { mode: 0o600 });
}

/** The last report written at `path`; undefined when there is none or it does not parse. */
export async function readReport(path: string): Promise<ProbeReport | undefined> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch {
    return undefined;
  }
  try {
    const parsed = ProbeReport.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}
