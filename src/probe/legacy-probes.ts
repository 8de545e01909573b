import type { ProbeReport, ProbeResult, RouteComparison } from './report.ts';

/**
 * Named probes that only the legacy API can settle: what v2 itself answered (its ids, its scales,
 * its wrapper keys). Each reads the route comparison of `npm run probe` (routes.ts): refuted when
 * the compare engine found a mismatch at one of its field patterns, confirmed when both sides
 * answered 2xx and none of its patterns differs, unknown when no legacy API was compared.
 */
export interface LegacyProbe {
  name: string;
  checks: string;
  settles: string;
  /** The route template whose comparison decides. */
  route: string;
  /** Field patterns (the diff engine's notation); a trailing `*` matches any pattern that starts so. */
  patterns: readonly string[];
}

export const LEGACY_PROBES: readonly LegacyProbe[] = [
  {
    name: 'v2-error-rate-is-apm-summary-error-rate',
    checks: "v2's application_summary.error_rate equals apmSummary.errorRate unscaled (same scale on both sides)",
    settles: 'mappings/applications/application.ts APPLICATION_ASSUMPTIONS: error_rate passed through unscaled',
    route: '/v2/applications.{format}',
    patterns: ['applications[].application_summary.error_rate'],
  },
  {
    name: 'v2-host-error-rate-is-percent',
    checks: "v2's host error_rate is 100 x Errors/all over HttpDispatcher + OtherTransaction/all calls",
    settles: 'mappings/hosts-and-instances/app-topology.ts TOPOLOGY_ASSUMPTIONS: host and instance error_rate',
    route: '/v2/applications/{id}/hosts.{format}',
    patterns: ['application_hosts[].application_summary.error_rate'],
  },
  {
    name: 'v2-instance-ids-are-agent-ids',
    checks: "v2's instance ids are the ids the translation gives (applicationInstancesV2 details.id)",
    settles: 'mappings/hosts-and-instances/app-topology.ts: instance id = details.id (UNCONFIRMED as the v2 instance id)',
    route: '/v2/applications/{id}/instances.{format}',
    patterns: ['application_instances[]', 'application_instances', 'application_instances[].id'],
  },
  {
    name: 'v2-key-transaction-name-rule',
    checks: "v2's transaction_name is metricName without its first two segments (a path for URI-named transactions)",
    settles: 'mappings/key-transactions/key-transaction.ts KEY_TRANSACTION_ASSUMPTIONS: transaction_name rule',
    route: '/v2/key_transactions.{format}',
    patterns: ['key_transactions[].transaction_name'],
  },
  {
    name: 'v2-mobile-wrapper-keys',
    checks: 'v2 wraps mobile applications in `applications`, not `mobile_applications`',
    settles: 'mappings/mobile-applications/mobile-application.ts MOBILE_ASSUMPTIONS: wrapper keys',
    route: '/v2/mobile_applications.{format}',
    patterns: ['applications', 'mobile_applications*'],
  },
  {
    name: 'v2-user-ids-are-nerdgraph-ids',
    checks: "v2's user ids are NerdGraph's numeric user ids",
    settles: 'mappings/users/users.ts USER_ASSUMPTIONS: user ids',
    route: '/v2/users.{format}',
    patterns: ['users[]', 'users'],
  },
];

const matches = (pattern: string, differing: string): boolean =>
  pattern.endsWith('*') ? differing.startsWith(pattern.slice(0, -1)) : differing === pattern;

const ok = (status: number | null): boolean => status !== null && status >= 200 && status < 300;

export function judgeLegacyProbe(probe: LegacyProbe, legacy: ProbeReport['legacy']): ProbeResult {
  const result = (verdict: ProbeResult['verdict'], evidence: string): ProbeResult => ({ name: probe.name, checks: probe.checks, settles: probe.settles, verdict, evidence });
  if (legacy === null) return result('unknown', 'no legacy API compared (set LEGACY_REST_URL while it answers)');
  if (legacy.unavailable !== null) return result('unknown', `the legacy API did not answer: ${legacy.unavailable}`);
  const route: RouteComparison | undefined = legacy.routes.find((candidate) => candidate.route === probe.route);
  if (route === undefined || route.result === 'skipped' || route.result === 'error') return result('unknown', `GET ${probe.route} was not compared (${route?.outcome ?? 'not sampled'})`);
  if (!ok(route.status.legacy) || !ok(route.status.translated)) return result('unknown', `GET ${route.request} answered legacy ${route.status.legacy ?? '-'} / translated ${route.status.translated ?? '-'}`);
  const differing = route.differing.filter((pattern) => probe.patterns.some((own) => matches(own, pattern)));
  if (differing.length > 0) return result('refuted', `GET ${route.request}: the legacy API and the translation differ at ${differing.join(', ')}`);
  return result('confirmed', `GET ${route.request}: no mismatch at ${probe.patterns.join(', ')} (route ${route.result}, ${route.outcome})`);
}
