import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { LOG_BUFFER_MAX_BYTES } from './log-destination.ts';
import { parseRouteModes, RouteModesError, type ModeRule } from './route-modes.ts';

/**
 * Gateway configuration: environment variables, optionally merged over a JSON file named by
 * V2BRIDGE_CONFIG_FILE (environment wins). Validated once at start-up; a bad value stops the
 * process with a message naming the variable. Secrets (API keys) are never read from here:
 * callers bring their own key on every request.
 */
const REGION_URLS = {
  us: 'https://api.newrelic.com/graphql',
  eu: 'https://api.eu.newrelic.com/graphql',
} as const;

const positiveInt = z.coerce.number().int().positive();

/** `1`/`true`/`yes`/`on` or `0`/`false`/`no`/`off`, any case. */
const flag = z
  .string()
  .trim()
  .toLowerCase()
  .pipe(z.enum(['1', 'true', 'yes', 'on', '0', 'false', 'no', 'off']))
  .transform((value) => ['1', 'true', 'yes', 'on'].includes(value));

/** ROUTE_MODES text -> rules; a bad rule is an issue naming it (so loadConfig names ROUTE_MODES). */
const routeModes = z.string().transform((text, ctx): ModeRule[] => {
  try {
    return parseRouteModes(text);
  } catch (error) {
    if (!(error instanceof RouteModesError)) throw error;
    ctx.addIssue({ code: 'custom', message: error.message });
    return z.NEVER;
  }
});

/** Also what an app built without a loaded configuration uses (tests, embedding). */
export const KEY_GUARD_DEFAULTS = { refusedTtlMs: 60_000, refusedMax: 10_000, verificationsPerAddressPerMinute: 20 } as const;
const DEFAULT_DEADLINE_MS = 10_000;

const ConfigSchema = z
  .object({
    PORT: z.coerce.number().int().min(0).max(65535).default(8080),
    HOST: z.string().min(1).default('127.0.0.1'),
    /** Explicit NerdGraph endpoint; wins over NEW_RELIC_REGION. */
    NERDGRAPH_URL: z.url({ protocol: /^https?$/ }).optional(),
    NEW_RELIC_REGION: z.enum(['us', 'eu']).optional(),
    /** Default account for keys that can see several and requests without X-Account-Id. */
    NEW_RELIC_ACCOUNT_ID: positiveInt.optional(),
    /** Origin used in Link headers, e.g. https://v2-bridge.example.com (default: the request's). */
    PUBLIC_BASE_URL: z.url({ protocol: /^https?$/ }).optional(),
    /** One deadline per inbound request, covering every NerdGraph call it makes, retries included. */
    REQUEST_DEADLINE_MS: positiveInt.max(120_000).optional(),
    /** The former per-call timeout: accepted as an alias of REQUEST_DEADLINE_MS, which wins. */
    UPSTREAM_TIMEOUT_MS: positiveInt.max(120_000).optional(),
    UPSTREAM_RETRIES: z.coerce.number().int().min(0).max(5).default(1),
    CURSOR_CACHE_TTL_MS: positiveInt.default(300_000),
    ACCOUNTS_CACHE_TTL_MS: positiveInt.default(300_000),
    /** How long a key NerdGraph refused is answered 401/403 without asking again (0: never). */
    REFUSED_KEY_CACHE_TTL_MS: z.coerce.number().int().min(0).max(3_600_000).default(KEY_GUARD_DEFAULTS.refusedTtlMs),
    REFUSED_KEY_CACHE_MAX: positiveInt.max(1_000_000).default(KEY_GUARD_DEFAULTS.refusedMax),
    /** Distinct unknown keys one client address may have verified per minute (0: no limit). */
    KEY_VERIFICATIONS_PER_ADDRESS: z.coerce.number().int().min(0).max(10_000).default(KEY_GUARD_DEFAULTS.verificationsPerAddressPerMinute),
    /** How far back metrics.json and metric data look for metric names (NerdGraph has no full list). */
    METRIC_NAMES_LOOKBACK_DAYS: positiveInt.max(90).default(7),
    /**
     * On SIGTERM/SIGINT, how long requests in flight may take to finish before the process exits
     * anyway. Request deadlines are brought forward to end before it (src/index.ts), so the default
     * may stay below REQUEST_DEADLINE_MS and inside `docker stop`'s 10 s.
     */
    SHUTDOWN_DRAIN_MS: positiveInt.max(600_000).default(8_000),
    /** Identical NerdGraph reads inside this window are answered once (0: off). */
    MICRO_CACHE_MS: z.coerce.number().int().min(0).max(60_000).default(1_000),
    MICRO_CACHE_MAX_BYTES: positiveInt.max(1_073_741_824).default(64 * 1024 * 1024),
    LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
    /** Bytes of log lines held while stdout does not read; past it, lines are dropped and counted. */
    LOG_BUFFER_MAX_BYTES: positiveInt.min(65_536).max(1_073_741_824).default(LOG_BUFFER_MAX_BYTES),
    SANDBOX_SEED: z.coerce.number().int().min(-2_147_483_648).max(4_294_967_295).default(42),
    SANDBOX_APM_APPS: z.coerce.number().int().min(0).max(100_000).default(500),
    /** `KEY=acct[,acct];KEY2=acct` for the embedded sandbox; its defaults include a demo key. */
    SANDBOX_API_KEYS: z.string().optional(),
    /** Migration modes per route (src/ops/route-modes.ts); unset: translate, alerts passthrough. */
    ROUTE_MODES: routeModes.optional(),
    /** Where passthrough and comparisons call the legacy REST API (v2 paths are `/v2/...` under it). */
    LEGACY_REST_URL: z
      .url({ protocol: /^https?$/ })
      .refine((text) => {
        const url = new URL(text);
        return url.username === '' && url.password === '' && url.search === '' && url.hash === '';
      }, 'an origin with an optional base path: no user, password, query or fragment')
      // Normalised (host case, default port), so Link URLs that point at it are recognised.
      .transform((text) => {
        const url = new URL(text);
        return `${url.origin}${url.pathname.replace(/\/+$/, '')}`;
      })
      .optional(),
    /** Share of (caller, route) pairs whose requests get shadow work in compare/candidate modes. */
    COMPARE_SAMPLE_RATE: z.coerce.number().min(0).max(1).default(1),
    COMPARE_CONCURRENCY: positiveInt.max(256).default(2),
    /** Shadow work waiting beyond COMPARE_CONCURRENCY; more is dropped and counted. */
    COMPARE_QUEUE_MAX: z.coerce.number().int().min(0).max(100_000).default(64),
    /** Numeric tolerances per field path, read by the diff engine (src/compare/thresholds.ts). */
    COMPARE_THRESHOLDS: z.string().optional(),
    /** A legacy answer longer than this is streamed to the caller but not compared (counted as an error). */
    COMPARE_MAX_BODY_BYTES: positiveInt.max(256 * 1024 * 1024).default(2 * 1024 * 1024),
    /** Shadow work is dropped (counted) while the event loop's recent utilisation is above this and other callers are in flight; 1: never. */
    COMPARE_MAX_LOOP_UTILISATION: z.coerce.number().min(0).max(1).default(0.5),
    /** Mismatch records kept for /bridge/ (oldest dropped first). */
    /**
     * Guards /bridge/ and /bridge/parity.json (their records hold callers' data): Bearer token or
     * Basic password. Unset: only loopback clients are served.
     */
    BRIDGE_TOKEN: z.string().min(16, 'use at least 16 characters').optional(),
    PARITY_RECORDS_MAX: positiveInt.max(1_000_000).default(1000),
    /** Embedded sandbox: comma-separated divergence names of its NerdGraph face (sandbox/). */
    SANDBOX_DIVERGE: z.string().optional(),
    /** Embedded sandbox: its legacy face's open minute varies per call, as real metric data does. */
    SANDBOX_LEGACY_JITTER: flag.default(false),
    /** Shared state for replicas (src/state/): redis://[user:password@]host:port[/db] or rediss://. Unset: this process's memory. */
    REDIS_URL: z.url({ protocol: /^rediss?$/ }).optional(),
    /** HMAC secret every replica shares: names every Redis key and the callers' identities (required with REDIS_URL). */
    STATE_SECRET: z.string().min(32, 'use at least 32 characters (e.g. openssl rand -base64 32)').optional(),
    /** A Redis command slower than this counts as Redis trouble: this replica serves from memory until Redis answers again. */
    STATE_TIMEOUT_MS: positiveInt.max(10_000).default(500),
    /** How often a degraded replica asks Redis whether it is back. */
    STATE_PROBE_MS: positiveInt.max(60_000).default(1_000),
    /** This replica's name, sent as X-V2Bridge-Replica on every answer (unset: no header). */
    REPLICA_NAME: z.string().regex(/^[A-Za-z0-9._-]{1,64}$/, 'letters, digits, ".", "_" and "-" only, at most 64').optional(),
    /** NerdGraph calls one user (all its keys together, once known) may have in flight across all replicas (NerdGraph allows 25 per user). */
    NERDGRAPH_CONCURRENCY_PER_KEY: positiveInt.max(1_000).default(25),
    /** NRQL queries one account may be sent per minute across all replicas (NerdGraph allows 3,000). */
    NRQL_PER_ACCOUNT_PER_MINUTE: positiveInt.max(1_000_000).default(3_000),
    /** Sends of one identical query per user (all its keys, once known) per minute across all replicas (NerdGraph allows 120). */
    IDENTICAL_QUERY_PER_MINUTE: positiveInt.max(1_000_000).default(120),
    /** Where `npm run probe` writes its report and /bridge/ reads the last one (src/probe/). */
    PROBE_REPORT_PATH: z.string().min(1).default('probe-report.json'),
    /** OpenTelemetry (docs/tracing.md): either endpoint set turns tracing on; unset, no OpenTelemetry module is loaded. */
    OTEL_EXPORTER_OTLP_ENDPOINT: z.url({ protocol: /^https?$/ }).optional(),
    OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: z.url({ protocol: /^https?$/ }).optional(),
    /** The gateway's exporter speaks OTLP/HTTP with JSON (which New Relic ingests); another protocol asked for is an error, not ignored. */
    OTEL_EXPORTER_OTLP_PROTOCOL: z.literal('http/json', 'this gateway exports http/json only').optional(),
    OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: z.literal('http/json', 'this gateway exports http/json only').optional(),
    OTEL_SERVICE_NAME: z.string().trim().min(1).default('v2-bridge'),
    /** The standard switch: true keeps tracing off even with an endpoint set. */
    OTEL_SDK_DISABLED: flag.default(false),
  })
  .refine((env) => env.REDIS_URL === undefined || env.STATE_SECRET !== undefined, {
    path: ['STATE_SECRET'],
    message: 'required with REDIS_URL: every replica must share it (Redis keys are HMACs under it, never raw keys)',
  })
  .transform((env) => ({
    port: env.PORT,
    host: env.HOST,
    /** undefined: no real NerdGraph configured, run on the embedded sandbox. */
    nerdgraphUrl: env.NERDGRAPH_URL ?? (env.NEW_RELIC_REGION ? REGION_URLS[env.NEW_RELIC_REGION] : undefined),
    defaultAccountId: env.NEW_RELIC_ACCOUNT_ID,
    publicBaseUrl: env.PUBLIC_BASE_URL?.replace(/\/+$/, ''),
    requestDeadlineMs: env.REQUEST_DEADLINE_MS ?? env.UPSTREAM_TIMEOUT_MS ?? DEFAULT_DEADLINE_MS,
    /** The NerdGraph client's own per-call bound: only a backstop, as every call carries its request's deadline. */
    upstreamTimeoutMs: env.REQUEST_DEADLINE_MS ?? env.UPSTREAM_TIMEOUT_MS ?? DEFAULT_DEADLINE_MS,
    upstreamRetries: env.UPSTREAM_RETRIES,
    cursorCacheTtlMs: env.CURSOR_CACHE_TTL_MS,
    accountsCacheTtlMs: env.ACCOUNTS_CACHE_TTL_MS,
    keyGuard: {
      refusedTtlMs: env.REFUSED_KEY_CACHE_TTL_MS,
      refusedMax: env.REFUSED_KEY_CACHE_MAX,
      verificationsPerAddressPerMinute: env.KEY_VERIFICATIONS_PER_ADDRESS,
    },
    metricNamesLookbackMs: env.METRIC_NAMES_LOOKBACK_DAYS * 86_400_000,
    shutdownDrainMs: env.SHUTDOWN_DRAIN_MS,
    microCache: { ttlMs: env.MICRO_CACHE_MS, maxBytes: env.MICRO_CACHE_MAX_BYTES },
    logLevel: env.LOG_LEVEL,
    logBufferMaxBytes: env.LOG_BUFFER_MAX_BYTES,
    sandbox: {
      seed: env.SANDBOX_SEED,
      apmApps: env.SANDBOX_APM_APPS,
      apiKeys: env.SANDBOX_API_KEYS,
      diverge: (env.SANDBOX_DIVERGE ?? '')
        .split(',')
        .map((name) => name.trim())
        .filter((name) => name !== ''),
      legacyJitter: env.SANDBOX_LEGACY_JITTER,
    },
    routeModes: env.ROUTE_MODES ?? [],
    /**
     * The legacy REST API: LEGACY_REST_URL, else the origin of the configured NerdGraph (the
     * region hosts serve both `/graphql` and `/v2`), else undefined: the embedded sandbox's
     * legacy face (src/index.ts).
     */
    legacyRestUrl: (env.LEGACY_REST_URL ?? legacyOriginOf(env.NERDGRAPH_URL ?? (env.NEW_RELIC_REGION ? REGION_URLS[env.NEW_RELIC_REGION] : undefined)))?.replace(/\/+$/, ''),
    compare: {
      sampleRate: env.COMPARE_SAMPLE_RATE,
      concurrency: env.COMPARE_CONCURRENCY,
      queueMax: env.COMPARE_QUEUE_MAX,
      thresholds: env.COMPARE_THRESHOLDS,
      maxBodyBytes: env.COMPARE_MAX_BODY_BYTES,
      maxLoopUtilisation: env.COMPARE_MAX_LOOP_UTILISATION,
    },
    parityRecordsMax: env.PARITY_RECORDS_MAX,
    bridgeToken: env.BRIDGE_TOKEN,
    sharedState: {
      redisUrl: env.REDIS_URL,
      secret: env.STATE_SECRET,
      timeoutMs: env.STATE_TIMEOUT_MS,
      probeMs: env.STATE_PROBE_MS,
    },
    replicaName: env.REPLICA_NAME,
    probeReportPath: env.PROBE_REPORT_PATH,
    tracing: tracingOf(env),
    budgets: {
      concurrencyPerKey: env.NERDGRAPH_CONCURRENCY_PER_KEY,
      nrqlPerAccountPerMinute: env.NRQL_PER_ACCOUNT_PER_MINUTE,
      identicalQueryPerMinute: env.IDENTICAL_QUERY_PER_MINUTE,
    },
  }));

/**
 * Tracing's settings, or undefined when it is off. The traces URL as the OTLP exporter
 * specification builds it: the signal's own endpoint as given, else the base endpoint with
 * `v1/traces` appended to its path.
 */
function tracingOf(env: {
  OTEL_EXPORTER_OTLP_ENDPOINT?: string | undefined;
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?: string | undefined;
  OTEL_SERVICE_NAME: string;
  OTEL_SDK_DISABLED: boolean;
}): { tracesUrl: string; serviceName: string } | undefined {
  if (env.OTEL_SDK_DISABLED) return undefined;
  const base = env.OTEL_EXPORTER_OTLP_ENDPOINT;
  const tracesUrl = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ?? (base === undefined ? undefined : `${base.replace(/\/+$/, '')}/v1/traces`);
  return tracesUrl === undefined ? undefined : { tracesUrl, serviceName: env.OTEL_SERVICE_NAME };
}

function legacyOriginOf(nerdgraphUrl: string | undefined): string | undefined {
  return nerdgraphUrl === undefined ? undefined : new URL(nerdgraphUrl).origin;
}

export type GatewayConfig = z.output<typeof ConfigSchema>;

export class ConfigError extends Error {}

type Source = Record<string, string | undefined>;

function readFileSource(path: string): Source {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(path, 'utf8'));
  } catch (error) {
    throw new ConfigError(`V2BRIDGE_CONFIG_FILE ${path}: ${(error as Error).message}`);
  }
  const shape = z.record(z.string(), z.union([z.string(), z.number(), z.boolean()])).safeParse(parsed);
  if (!shape.success) throw new ConfigError(`V2BRIDGE_CONFIG_FILE ${path}: expected a flat JSON object of settings`);
  return Object.fromEntries(Object.entries(shape.data).map(([k, v]) => [k, String(v)]));
}

/** Reads and validates the configuration; throws ConfigError with every problem listed. */
export function loadConfig(env: Source = process.env): GatewayConfig {
  const file = env.V2BRIDGE_CONFIG_FILE ? readFileSource(env.V2BRIDGE_CONFIG_FILE) : {};
  // Empty strings mean "unset", as in most shells' `VAR=` idiom.
  const merged = Object.fromEntries(
    Object.entries({ ...file, ...env }).filter(([, value]) => value !== undefined && value !== ''),
  );
  const result = ConfigSchema.safeParse(merged);
  if (!result.success) {
    const problems = result.error.issues.map((issue) => `  ${issue.path.join('.') || '(config)'}: ${issue.message}`);
    throw new ConfigError(`Invalid configuration:\n${problems.join('\n')}`);
  }
  return result.data;
}
