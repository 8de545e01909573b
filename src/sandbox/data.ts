/**
 * Deterministic synthetic data for the sandbox. The same options always give the same
 * world (down to every decimal), so tests and golden fixtures can rely on it.
 */
import { entityGuid, syntheticHostId } from '../v2/ids.ts';
import type {
  AlertSeverity,
  SandboxAccount,
  SandboxApmSummary,
  SandboxApp,
  SandboxBrowserSummary,
  SandboxData,
  SandboxHost,
} from './model.ts';

export interface GenerateOptions {
  seed: number;
  /** Number of APM apps in the primary account (the secondary always gets 25). */
  apmApps: number;
  /** API key -> visible account ids; DEFAULT_API_KEYS when omitted. */
  apiKeys?: Map<string, number[]>;
  /** Epoch ms; places lastReportingChangeAt values and metric lifetimes in the recent past. */
  now: number;
}

export const PRIMARY_ACCOUNT: SandboxAccount = { id: 1000001, name: 'Sandbox Primary' };
export const SECONDARY_ACCOUNT: SandboxAccount = { id: 1000002, name: 'Sandbox Secondary' };
const SECONDARY_APP_COUNT = 25;

export function defaultApiKeys(): Map<string, number[]> {
  return new Map([
    ['NRAK-SANDBOX-DEMO', [PRIMARY_ACCOUNT.id]],
    ['NRAK-SANDBOX-MULTI', [PRIMARY_ACCOUNT.id, SECONDARY_ACCOUNT.id]],
    ['NRAK-SANDBOX-SECONDARY', [SECONDARY_ACCOUNT.id]],
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
  const counters = { appId: 200_000_000, instanceId: 300_000_000, nameSequence: 0 };
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
  return { accounts, apps, keyTransactions: [], mobileApps: [], browserApps: [], keys, generatedAt: opts.now, writes: { version: 0, deployments: new Map(), createdApps: [], sequence: 0 } };
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
  counters: { instanceId: number },
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

function generateHosts(random: Random, appId: number, counters: { instanceId: number }): SandboxHost[] {
  const hostCount = intBetween(random, 1, 4);
  const names = new Set<string>();
  while (names.size < hostCount) names.add(hostName(random));
  return [...names].map((name) => {
    // Distinct ports per host keep "<host>:<port>" instance names unique within the app.
    const ports = shuffled(random, PORTS).slice(0, intBetween(random, 1, 3));
    return {
      id: syntheticHostId(appId, name),
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
