/**
 * Deterministic synthetic data for the sandbox. The same options always give the same
 * world (down to every decimal), so tests and golden fixtures can rely on it.
 */
import { resolveBehaviours, type SandboxBehaviours } from './behaviours.ts';
import { entityGuid } from './ids.ts';
import type {
  AlertSeverity,
  SandboxAccount,
  SandboxApmSummary,
  SandboxApp,
  SandboxBrowserApp,
  SandboxBrowserSummary,
  SandboxData,
  SandboxHost,
  SandboxKeyTransaction,
  SandboxMobileApp,
  SandboxMobileSummary,
} from './model.ts';
import { generateAlerts } from './alerts.ts';
import type { DivergenceName } from './divergence.ts';
import { createWriteCounter } from './write-counts.ts';
import { seededUserTags } from './tagging.ts';
import { apmAttachedBrowserApp, browserAppFields, mobileApplicationToken } from './writes.ts';
import { browserConfigured, seededBrowserLoader } from './browser-loader.ts';

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
}

export const PRIMARY_ACCOUNT: SandboxAccount = { id: 1000001, name: 'Sandbox Primary' };
export const SECONDARY_ACCOUNT: SandboxAccount = { id: 1000002, name: 'Sandbox Secondary' };
const SECONDARY_APP_COUNT = 25;

export function defaultApiKeys(): Map<string, number[]> {
  return new Map([
    ['NRAK-SANDBOX-DEMO', [PRIMARY_ACCOUNT.id]],
    ['NRAK-SANDBOX-MULTI', [PRIMARY_ACCOUNT.id, SECONDARY_ACCOUNT.id]],
    ['NRAK-SANDBOX-SECONDARY', [SECONDARY_ACCOUNT.id]],
    // Issue 20, point 8: a second key of the DEMO key's user (defaultKeyUsers), e.g. a CI job's.
    ['NRAK-SANDBOX-DEMO-CI', [PRIMARY_ACCOUNT.id]],
  ]);
}

/** The user who owns both default primary-account keys (NRAK-SANDBOX-DEMO and NRAK-SANDBOX-DEMO-CI). */
export const SANDBOX_DEMO_USER_ID = 1_000_042;

/**
 * Which user owns which key in the default world: NerdGraph limits concurrency per user, not
 * per key (issue 20, point 8), so two keys of one user share one limit. The other default keys
 * are each a user of their own.
 */
export function defaultKeyUsers(): Map<string, number> {
  return new Map([
    ['NRAK-SANDBOX-DEMO', SANDBOX_DEMO_USER_ID],
    ['NRAK-SANDBOX-DEMO-CI', SANDBOX_DEMO_USER_ID],
  ]);
}

/** mulberry32: tiny, fast and good enough for test data; never Math.random. */
export function createRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

type Random = () => number;

function intBetween(random: Random, min: number, max: number): number {
  return min + Math.floor(random() * (max - min + 1));
}

function pick<T>(random: Random, items: readonly T[]): T {
  return items[Math.floor(random() * items.length)] as T;
}

function round(value: number, decimals: number): number {
  const factor = 10 ** decimals;
  return Math.round(value * factor) / factor;
}

const LANGUAGES = ['java', 'python', 'ruby', 'nodejs', 'php', 'dotnet', 'go'] as const;
const ADJECTIVES = [
  'Amber', 'Brisk', 'Calm', 'Daring', 'Eager', 'Frosty', 'Gentle', 'Hidden', 'Ivory', 'Jolly',
  'Keen', 'Lucky', 'Mellow', 'Nimble', 'Olive', 'Proud', 'Quiet', 'Rapid', 'Silent', 'Tidy',
] as const;
const NOUNS = [
  'Checkout', 'Billing', 'Gateway', 'Inventory', 'Search', 'Payments', 'Ledger', 'Catalog',
  'Shipping', 'Auth', 'Reports', 'Scheduler', 'Mailer', 'Profile', 'Cart', 'Pricing',
] as const;
const TEAMS = ['Billing', 'Checkout', 'Storefront', 'Platform', 'Data'] as const;
const COMPONENTS = ['API', 'Worker', 'Web', 'Cron', 'Admin'] as const;
const APDEX_TARGETS = [0.1, 0.25, 0.5, 1, 2] as const;
const BROWSER_APDEX_TARGETS = [1, 2, 2.5, 7] as const;
const PORTS = [0, 80, 8080, 3000] as const;
const DAY_MS = 24 * 60 * 60 * 1000;

/** Generates both accounts, their apps, hosts and instances from one seeded stream. */
export function generateSandboxData(opts: GenerateOptions): SandboxData {
  if (!Number.isInteger(opts.apmApps) || opts.apmApps < 0) {
    throw new Error(`apmApps must be a non-negative integer, got ${opts.apmApps}`);
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
  addFleetHosts(opts.seed, apps);
  // Labels (tagging.ts): user tags, a pure function of each app's id.
  for (const app of apps) app.userTags = seededUserTags(app);
  const behaviours = resolveBehaviours(opts.behave);
  // Browser loaders (browser-loader.ts): a pure function of each app's id and traffic.
  for (const app of apps) app.browserLoader = seededBrowserLoader(app, behaviours.browserLoaderConfig);
  const others = generateOtherEntities(opts, apps);
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
  };
}

/** Mixed into the seed so the fleet app's hosts draw from their own stream (see addFleetHosts). */
const FLEET_STREAM = 0x0f1e_e7a5;
/** Extra hosts of the fleet app, one instance each: with its own hosts, more than 2 pages of 200. */
export const FLEET_EXTRA_HOSTS = 450;
/** Fleet instance ids, apart from the other instances (300,000,000+). */
const FIRST_FLEET_INSTANCE_ID = 350_000_000;
/** Fleet app: the first reporting app of the primary account from this index on (the bulk-metrics app is at 3 or later). */
const FLEET_APP_INDEX = 6;

/**
 * The app whose host and instance lists fill several v2 pages: the first reporting app of the
 * primary account from its FLEET_APP_INDEX-th app on, or undefined in a smaller world.
 */
export function fleetApp(apps: readonly SandboxApp[]): SandboxApp | undefined {
  return apps.filter((app) => app.accountId === PRIMARY_ACCOUNT.id).slice(FLEET_APP_INDEX).find((app) => app.reporting);
}

/**
 * Gives the fleet app FLEET_EXTRA_HOSTS more hosts, from a random stream of their own drawn
 * after every app exists, so no other app (nor any other value of this one) changes.
 */
function addFleetHosts(seed: number, apps: readonly SandboxApp[]): void {
  const app = fleetApp(apps);
  if (!app) return;
  const random = createRandom((seed ^ FLEET_STREAM) >>> 0);
  let instanceId = FIRST_FLEET_INSTANCE_ID;
  // Made after every other host: the world's host sequence goes on from its last id.
  let hostId = Math.max(...apps.flatMap((other) => other.hosts.map((host) => host.id)));
  for (let index = 1; index <= FLEET_EXTRA_HOSTS; index++) {
    const name = `fleet-${String(index).padStart(3, '0')}.example.internal`;
    const port = pick(random, PORTS);
    instanceId += intBetween(random, 1, 50);
    app.hosts.push({ id: ++hostId, name, instances: [{ id: instanceId, port, instanceName: port > 0 ? `${name}:${port}` : name }] });
  }
}

/** Mixed into the seed so the non-APM entities draw from their own stream (see generateOtherEntities). */
const OTHER_ENTITIES_STREAM = 0x6b7e_11a5;
/** Per APM app in the primary account: 500 apps give 650 of each kind, more than 3 pages of 200. */
const OTHER_ENTITIES_PER_APM_APP = 1.3;
const MIN_OTHER_ENTITIES = 5;
const SECONDARY_OTHER_ENTITY_COUNT = 25;
/** Id ranges apart from APM apps (200,000,000+), instances (300,000,000+) and created apps (900,000,000+). */
const FIRST_KEY_TRANSACTION_ID = 400_000_000;
const FIRST_MOBILE_APP_ID = 500_000_000;
const FIRST_STANDALONE_BROWSER_APP_ID = 600_000_000;

/** How many key transactions, mobile apps and standalone browser apps an account gets. */
export function otherEntityCount(accountId: number, apmApps: number): number {
  if (accountId !== PRIMARY_ACCOUNT.id) return SECONDARY_OTHER_ENTITY_COUNT;
  return Math.max(MIN_OTHER_ENTITIES, Math.round(apmApps * OTHER_ENTITIES_PER_APM_APP));
}

/**
 * Key transactions, mobile apps and browser apps. They come from a separate random stream,
 * drawn after every APM app exists, so adding them changed no APM app's values.
 */
function generateOtherEntities(
  opts: GenerateOptions,
  apps: SandboxApp[],
): Pick<SandboxData, 'keyTransactions' | 'mobileApps' | 'browserApps'> {
  const random = createRandom((opts.seed ^ OTHER_ENTITIES_STREAM) >>> 0);
  const ids = { keyTransaction: FIRST_KEY_TRANSACTION_ID, mobile: FIRST_MOBILE_APP_ID, browser: FIRST_STANDALONE_BROWSER_APP_ID };
  const sequence = { keyTransaction: 0, mobile: 0, browser: 0 };
  const keyTransactions: SandboxKeyTransaction[] = [];
  const mobileApps: SandboxMobileApp[] = [];
  const browserApps: SandboxBrowserApp[] = [];
  for (const account of [PRIMARY_ACCOUNT, SECONDARY_ACCOUNT]) {
    const count = otherEntityCount(account.id, opts.apmApps);
    const accountApps = apps.filter((app) => app.accountId === account.id);
    const slugsByApp = new Map<number, Set<string>>();
    // A key transaction needs a parent app: an account without apps has none.
    for (let index = 0; accountApps.length > 0 && index < count; index++) {
      ids.keyTransaction += intBetween(random, 1, 97);
      sequence.keyTransaction += 1;
      const app = pick(random, accountApps);
      keyTransactions.push(generateKeyTransaction(random, app, ids.keyTransaction, otherEntityName(random, index, sequence.keyTransaction, 'KT'), slugsByApp, opts.now));
    }
    for (let index = 0; index < count; index++) {
      ids.mobile += intBetween(random, 1, 97);
      sequence.mobile += 1;
      mobileApps.push(generateMobileApp(random, account.id, ids.mobile, otherEntityName(random, index, sequence.mobile, 'Mobile'), opts.now));
    }
    for (const app of accountApps) {
      // Every app configured for browser monitoring has its browser side, traffic or not.
      if (browserConfigured(app)) browserApps.push(attachedBrowserApp(app, resolveBehaviours(opts.behave).browserAppCarriesApmAppId));
    }
    for (let index = 0; index < count; index++) {
      ids.browser += intBetween(random, 1, 97);
      sequence.browser += 1;
      browserApps.push(generateStandaloneBrowserApp(random, account.id, ids.browser, otherEntityName(random, index, sequence.browser, 'Browser'), opts.now));
    }
  }
  return { keyTransactions, mobileApps, browserApps };
}

/**
 * Like appName: the first few of each kind per account get awkward names (a double quote, a
 * backslash, a slash, an apostrophe); the kind label and the sequence keep every name unique.
 */
function otherEntityName(random: Random, indexInAccount: number, sequence: number, kind: string): string {
  switch (indexInAccount) {
    case 0:
      return `Checkout "${kind}" ${sequence}`;
    case 1:
      return `Batch\\${kind} ${sequence}`;
    case 2:
      return `${pick(random, TEAMS)}/${kind} ${sequence}`;
    case 3:
      return `O'Brien's ${kind} ${sequence}`;
    default:
      return `${pick(random, ADJECTIVES)} ${pick(random, NOUNS)} ${kind} ${sequence}`;
  }
}

const KEY_TRANSACTION_PATHS = ['checkout', 'cart', 'login', 'search', 'orders', 'invoice', 'profile', 'pay'] as const;

function generateKeyTransaction(
  random: Random,
  app: SandboxApp,
  id: number,
  name: string,
  slugsByApp: Map<number, Set<string>>,
  now: number,
): SandboxKeyTransaction {
  const slugs = slugsByApp.get(app.id) ?? new Set<string>();
  slugsByApp.set(app.id, slugs);
  let slug: string = pick(random, KEY_TRANSACTION_PATHS);
  // Unique per app: a second "checkout" of the same app becomes "checkout-2".
  for (let suffix = 2; slugs.has(slug); suffix++) slug = `${slug.replace(/-\d+$/, '')}-${suffix}`;
  slugs.add(slug);
  // Most are named by URI; every third by a custom name, as agents name transactions both ways.
  const custom = id % 3 === 0;
  const display = `${slug.charAt(0).toUpperCase()}${slug.slice(1)} Page`;
  const metricName = custom ? `WebTransaction/Custom/${display}` : `WebTransaction/Uri/kt/${slug}`;
  const reporting = app.reporting && random() < 0.9;
  return {
    accountId: app.accountId,
    id,
    guid: entityGuid(app.accountId, 'APM', 'KEY_TRANSACTION', id),
    name,
    appId: app.id,
    metricName,
    transactionName: custom ? display : `/kt/${slug}`,
    apdexTarget: pick(random, APDEX_TARGETS),
    browserApdexTarget: app.browser?.apdexTarget ?? null,
    reporting,
    alertSeverity: randomSeverity(random),
    lastReportingChangeAt: now - intBetween(random, 60_000, 30 * DAY_MS),
  };
}

function randomSeverity(random: Random): AlertSeverity {
  return pick(random, ['CRITICAL', 'WARNING', 'NOT_ALERTING', 'NOT_ALERTING', 'NOT_CONFIGURED'] as const);
}

function generateMobileApp(random: Random, accountId: number, id: number, name: string, now: number): SandboxMobileApp {
  const reporting = random() < 0.75;
  return {
    accountId,
    id,
    guid: entityGuid(accountId, 'MOBILE', 'APPLICATION', id),
    name,
    reporting,
    alertSeverity: randomSeverity(random),
    lastReportingChangeAt: now - intBetween(random, 60_000, 30 * DAY_MS),
    applicationToken: mobileApplicationToken(id),
    summary: reporting ? generateMobileSummary(random) : null,
  };
}

function generateMobileSummary(random: Random): SandboxMobileSummary {
  const sessionCount = intBetween(random, 50, 50_000);
  const crashCount = intBetween(random, 0, Math.floor(sessionCount / 20));
  const activeUsers = intBetween(random, 10, sessionCount);
  const httpRequestCount = intBetween(random, sessionCount, sessionCount * 20);
  return {
    activeUsers,
    launchCount: intBetween(random, sessionCount, sessionCount * 2),
    throughput: round(httpRequestCount / 10, 1),
    responseTimeSeconds: round(0.05 + random() * 2.95, 3),
    sessionCount,
    httpRequestCount,
    interactionTimeSeconds: round(0.1 + random() * 4.9, 2),
    failedCallRate: round(random() * 5, 2),
    remoteErrorRate: round(random() * 5, 2),
    crashCount,
    crashRate: round((crashCount / sessionCount) * 100, 2),
    unresolvedCrashCount: intBetween(random, 0, crashCount),
    usersAffectedCount: Math.min(activeUsers, intBetween(random, 0, crashCount)),
  };
}

/**
 * Added to an APM app's id to number its browser app when `browserAppCarriesApmAppId` is off
 * (behaviours.ts: a test shows `npm run probe` refuting that fact).
 */
export const OTHER_BROWSER_ID_OFFSET = 800_000_000;

function attachedBrowserApp(app: SandboxApp, carriesApmAppId: boolean): SandboxBrowserApp {
  const attached = apmAttachedBrowserApp(app);
  if (carriesApmAppId) return attached;
  const id = app.id + OTHER_BROWSER_ID_OFFSET;
  return { ...attached, id, guid: entityGuid(app.accountId, 'BROWSER', 'APPLICATION', id), ...browserAppFields(app.accountId, id) };
}

function generateStandaloneBrowserApp(random: Random, accountId: number, id: number, name: string, now: number): SandboxBrowserApp {
  return {
    accountId,
    id,
    guid: entityGuid(accountId, 'BROWSER', 'APPLICATION', id),
    name,
    reporting: random() < 0.75,
    alertSeverity: randomSeverity(random),
    lastReportingChangeAt: now - intBetween(random, 60_000, 30 * DAY_MS),
    servingApmApplicationId: null,
    apdexTarget: pick(random, BROWSER_APDEX_TARGETS),
    ...browserAppFields(accountId, id),
  };
}

/**
 * The first few apps of every account get hand-picked name shapes, so that name filters,
 * quoting and account scoping are exercised by every seed; the rest are random.
 * The global sequence number keeps every name unique across the sandbox.
 */
function appName(random: Random, indexInAccount: number, sequence: number): string {
  switch (indexInAccount) {
    case 0:
      return `Checkout Service ${sequence}`;
    case 1:
      return `${pick(random, TEAMS)}/${pick(random, COMPONENTS)} ${sequence}`;
    case 2:
      return `O'Brien's Batch\\Worker ${sequence}`;
    default:
      // One in eight random names is slash-separated, as real REST fixtures show.
      if (random() < 0.125) return `${pick(random, TEAMS)}/${pick(random, COMPONENTS)} ${sequence}`;
      return `${pick(random, ADJECTIVES)} ${pick(random, NOUNS)} ${sequence}`;
  }
}

function generateApp(
  random: Random,
  accountId: number,
  id: number,
  name: string,
  counters: { instanceId: number; hostId: number },
  now: number,
): SandboxApp {
  const language = pick(random, LANGUAGES);
  const reporting = random() < 0.8;
  const alertPolicyId = random() < 0.3 ? null : intBetween(random, 100_000, 100_060);
  // Coherent with REST health_status: no policy means "unknown", i.e. NOT_CONFIGURED.
  const alertSeverity: AlertSeverity =
    alertPolicyId === null ? 'NOT_CONFIGURED' : pick(random, ['CRITICAL', 'WARNING', 'NOT_ALERTING', 'NOT_ALERTING'] as const);
  const lastReportingChangeAt = now - intBetween(random, 60_000, 30 * DAY_MS);
  const apdexTarget = pick(random, APDEX_TARGETS);
  const serverSideConfig = random() < 0.5;
  const summary = reporting ? generateSummary(random) : null;
  const browser = random() < 0.4 ? generateBrowser(random) : null;
  const hosts = generateHosts(random, id, counters);
  return {
    accountId,
    id,
    guid: entityGuid(accountId, 'APM', 'APPLICATION', id),
    name,
    language,
    reporting,
    alertSeverity,
    lastReportingChangeAt,
    apdexTarget,
    serverSideConfig,
    summary,
    browser,
    hosts,
    alertPolicyId,
  };
}

function generateSummary(random: Random): SandboxApmSummary {
  const rawThroughput = random() * 5000;
  return {
    responseTimeMs: round(1 + random() * 899, 2),
    // Real summaries show both whole and fractional rpm values.
    throughput: random() < 0.5 ? Math.round(rawThroughput) : round(rawThroughput, 1),
    errorRate: round(random() * 5, 2),
    apdexScore: round(random(), 2),
  };
}

function generateBrowser(random: Random): SandboxBrowserSummary {
  return {
    pageLoadTimeSeconds: round(0.3 + random() * 7.7, 2),
    pageLoadThroughput: round(random() * 2000, 2),
    apdexTarget: pick(random, BROWSER_APDEX_TARGETS),
    apdexScore: round(random(), 2),
    ajaxRequestThroughput: round(random() * 3000, 2),
    ajaxResponseTimeSeconds: round(0.05 + random() * 2.95, 2),
    jsErrorRate: round(random() * 5, 2),
  };
}

function generateHosts(random: Random, appId: number, counters: { instanceId: number; hostId: number }): SandboxHost[] {
  const hostCount = intBetween(random, 1, 4);
  const names = new Set<string>();
  while (names.size < hostCount) names.add(hostName(random));
  return [...names].map((name) => {
    // Distinct ports per host keep "<host>:<port>" instance names unique within the app.
    const ports = shuffled(random, PORTS).slice(0, intBetween(random, 1, 3));
    return {
      id: ++counters.hostId,
      name,
      instances: ports.map((port) => {
        counters.instanceId += intBetween(random, 1, 50);
        return { id: counters.instanceId, port, instanceName: port > 0 ? `${name}:${port}` : name };
      }),
    };
  });
}

function hostName(random: Random): string {
  if (random() < 0.5) {
    return `ip-10-${intBetween(random, 0, 3)}-${intBetween(random, 0, 15)}-${intBetween(random, 2, 254)}`;
  }
  const role = pick(random, ['web', 'worker', 'api', 'batch'] as const);
  return `${role}-${String(intBetween(random, 1, 40)).padStart(2, '0')}.example.internal`;
}

function shuffled<T>(random: Random, items: readonly T[]): T[] {
  const copy = [...items];
  for (let i = copy.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [copy[i], copy[j]] = [copy[j] as T, copy[i] as T];
  }
  return copy;
}

function checkKeysReferToAccounts(keys: Map<string, number[]>, accounts: SandboxAccount[]): void {
  const known = new Set(accounts.map((account) => account.id));
  for (const [key, accountIds] of keys) {
    if (accountIds.length === 0) throw new Error(`API key ${key} has no accounts`);
    for (const accountId of accountIds) {
      if (!known.has(accountId)) {
        throw new Error(`API key ${key} refers to unknown account ${accountId} (sandbox accounts: ${[...known].join(', ')})`);
      }
    }
  }
}

/**
 * Parses SANDBOX_API_KEYS: `KEY=acct[,acct...];KEY2=acct`. Whitespace around parts and a
 * trailing `;` are tolerated; anything else malformed throws with the offending part quoted.
 */
export function parseApiKeys(spec: string): Map<string, number[]> {
  const keys = new Map<string, number[]>();
  const entries = spec.split(';').map((entry) => entry.trim());
  if (entries.at(-1) === '') entries.pop();
  if (entries.length === 0) throw new Error('API key list is empty; expected KEY=acct[,acct...];KEY2=acct');
  for (const entry of entries) {
    const match = /^([^=\s,;]+)\s*=\s*(.+)$/.exec(entry);
    if (!match) throw new Error(`Bad API key entry "${entry}": expected KEY=acct[,acct...]`);
    const [, key = '', accountList = ''] = match;
    if (keys.has(key)) throw new Error(`API key ${key} is listed twice`);
    const accountIds = accountList.split(',').map((part) => {
      const text = part.trim();
      if (!/^[1-9]\d{0,9}$/.test(text)) throw new Error(`Bad account id "${text}" for API key ${key}: expected a positive integer`);
      return Number(text);
    });
    keys.set(key, accountIds);
  }
  return keys;
}
