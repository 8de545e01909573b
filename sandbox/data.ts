/**
 * Deterministic synthetic data for the sandbox. The same options always give the same
 * world (down to every decimal), so tests and golden fixtures can rely on it.
 *
 * This module is the world's entry (generateSandboxData) and its public names; the parts are
 * in world/: accounts.ts (accounts and keys), draws.ts (the seeded stream), apm-apps.ts (APM
 * apps, hosts, instances, the fleet app), other-entities.ts (key transactions, mobile and
 * browser apps). Alerts (alerts.ts), labels (tagging.ts) and browser loaders (browser-loader.ts)
 * are drawn from their own streams or ids.
 */
import { resolveBehaviours, type SandboxBehaviours } from './behaviours.ts';
import type { SandboxApp, SandboxData } from './model.ts';
import { generateAlerts } from './alerts.ts';
import type { DivergenceName } from './divergence.ts';
import { createWriteCounter } from './write-counts.ts';
import { seededUserTags } from './tagging.ts';
import { seededBrowserLoader, switchedOffLater } from './browser-loader.ts';
import { PRIMARY_ACCOUNT, SECONDARY_ACCOUNT, checkKeysReferToAccounts, defaultApiKeys, defaultKeyUsers } from './world/accounts.ts';
import { FLEET_EXTRA_HOSTS, addFleetHosts, appName, generateApp } from './world/apm-apps.ts';
import { createRandom, intBetween } from './world/draws.ts';
import { generateOtherEntities } from './world/other-entities.ts';

// The world's public names (tests, the server, the gateway's start-up read them here).
export { PRIMARY_ACCOUNT, SANDBOX_DEMO_USER_ID, SECONDARY_ACCOUNT, defaultApiKeys, defaultKeyUsers, parseApiKeys } from './world/accounts.ts';
export { FLEET_EXTRA_HOSTS, fleetApp } from './world/apm-apps.ts';
export { createRandom } from './world/draws.ts';
export { OTHER_BROWSER_ID_OFFSET, otherEntityCount } from './world/other-entities.ts';

export interface GenerateOptions {
  seed: number;
  /** Number of APM apps in the primary account (the secondary always gets 25). */
  apmApps: number;
  /** API key -> visible account ids; DEFAULT_API_KEYS when omitted. */
  apiKeys?: Map<string, number[]>;
  /**
   * API key -> the id of the user who owns it (NerdGraph `actor.user.id`); several keys may name
   * one user. A key not listed is a user of its own (users.ts keyUserOf). Default: defaultKeyUsers().
   */
  keyUsers?: Map<string, number>;
  /** Epoch ms; places lastReportingChangeAt values and metric lifetimes in the recent past. */
  now: number;
  /** How the NerdGraph face differs from the legacy one (divergence.ts); none when omitted. */
  diverge?: readonly DivergenceName[];
  /** Documented New Relic behaviours to switch off (behaviours.ts); all on when omitted. */
  behave?: Partial<SandboxBehaviours>;
  /** Sizes of the world's parts (bench/growth.ts); each omitted one keeps its default. */
  size?: WorldSize;
}

/**
 * Data-size knobs for growth measurements: they change how much of a part there is, never its
 * shape. The defaults give the same world, value for value, as before the knobs existed.
 */
export interface WorldSize {
  /** Extra hosts of the fleet app, one instance each (default FLEET_EXTRA_HOSTS). */
  fleetExtraHosts?: number;
  /** Alert slots (ai-issues.ts) of the primary account: each opens issues over the history (default 40). */
  primaryAlertSlots?: number;
}

const SECONDARY_APP_COUNT = 25;

/** Generates both accounts, their apps, hosts and instances from one seeded stream. */
export function generateSandboxData(opts: GenerateOptions): SandboxData {
  for (const [knob, value] of [['apmApps', opts.apmApps], ...Object.entries(opts.size ?? {})] as const) {
    if (value !== undefined && (!Number.isInteger(value) || value < 0)) throw new Error(`${knob} must be a non-negative integer, got ${value}`);
  }
  const accounts = [PRIMARY_ACCOUNT, SECONDARY_ACCOUNT].map((account) => ({ ...account }));
  const keys = opts.apiKeys ?? defaultApiKeys();
  checkKeysReferToAccounts(keys, accounts);

  const random = createRandom(opts.seed);
  // Host ids are row ids, one sequence per world in the order hosts are made (as New Relic's
  // database gave them), not the ids the gateway derives from names.
  const counters = { appId: 200_000_000, instanceId: 300_000_000, hostId: 4_000_000, nameSequence: 0 };
  const apps: SandboxApp[] = [];
  for (const [account, count] of [
    [PRIMARY_ACCOUNT, opts.apmApps],
    [SECONDARY_ACCOUNT, SECONDARY_APP_COUNT],
  ] as const) {
    for (let index = 0; index < count; index++) {
      counters.appId += intBetween(random, 1, 97);
      counters.nameSequence += 1;
      const name = appName(random, index, counters.nameSequence);
      apps.push(generateApp(random, account.id, counters.appId, name, counters, opts.now));
    }
  }
  addFleetHosts(opts.seed, apps, opts.size?.fleetExtraHosts ?? FLEET_EXTRA_HOSTS);
  // Labels (tagging.ts): user tags, a pure function of each app's id.
  for (const app of apps) app.userTags = seededUserTags(app);
  const behaviours = resolveBehaviours(opts.behave);
  // Browser loaders (browser-loader.ts): a pure function of each app's id and traffic.
  for (const app of apps) app.browserLoader = seededBrowserLoader(app, behaviours.browserLoaderConfig);
  const others = generateOtherEntities(opts, apps);
  // Made after the browser apps, so those apps keep theirs (behaviours.ts).
  if (!behaviours.browserSideOnlyWhileLoaderOn) for (const app of apps) if (switchedOffLater(app)) app.browserLoader = 'NONE';
  const alerts = generateAlerts(
    opts.seed,
    accounts.map((account) => ({ accountId: account.id, primary: account.id === PRIMARY_ACCOUNT.id, appIds: apps.filter((app) => app.accountId === account.id).map((app) => app.id) })),
    opts.now,
  );
  return {
    accounts,
    apps,
    ...others,
    keys,
    keyUsers: opts.keyUsers ?? defaultKeyUsers(),
    generatedAt: opts.now,
    writes: { version: 0, deployments: new Map(), createdApps: [], sequence: 0, executed: createWriteCounter() },
    alerts,
    divergences: new Set(opts.diverge ?? []),
    behaviours,
    ...(opts.size?.primaryAlertSlots !== undefined && { primaryAlertSlots: opts.size.primaryAlertSlots }),
  };
}
