/**
 * The world's key transactions, mobile apps and browser apps (data.ts), APM-attached and
 * standalone. They come from a separate random stream, drawn after every APM app exists, so
 * adding them changed no APM app's values.
 */
import { resolveBehaviours, type SandboxBehaviours } from '../behaviours.ts';
import { browserConfigured } from '../browser-loader.ts';
import { entityGuid } from '../ids.ts';
import type { AlertSeverity, SandboxApp, SandboxBrowserApp, SandboxData, SandboxKeyTransaction, SandboxMobileApp, SandboxMobileSummary } from '../model.ts';
import { apmAttachedBrowserApp, browserAppFields, mobileApplicationToken } from '../writes.ts';
import { PRIMARY_ACCOUNT, SECONDARY_ACCOUNT } from './accounts.ts';
import { ADJECTIVES, APDEX_TARGETS, BROWSER_APDEX_TARGETS, DAY_MS, NOUNS, TEAMS, createRandom, intBetween, pick, round, type Random } from './draws.ts';
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

/** What of the world's options (data.ts GenerateOptions) these entities are drawn from. */
export interface OtherEntitiesOptions {
  seed: number;
  apmApps: number;
  now: number;
  behave?: Partial<SandboxBehaviours>;
}

/** How many key transactions, mobile apps and standalone browser apps an account gets. */
export function otherEntityCount(accountId: number, apmApps: number): number {
  if (accountId !== PRIMARY_ACCOUNT.id) return SECONDARY_OTHER_ENTITY_COUNT;
  return Math.max(MIN_OTHER_ENTITIES, Math.round(apmApps * OTHER_ENTITIES_PER_APM_APP));
}

/**
 * Key transactions, mobile apps and browser apps. They come from a separate random stream,
 * drawn after every APM app exists, so adding them changed no APM app's values.
 */
export function generateOtherEntities(
  opts: OtherEntitiesOptions,
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
