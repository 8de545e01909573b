import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { z } from 'zod';
import { buildGateway } from '../src/gateway.ts';
import { ConfigError, loadConfig } from '../src/ops/config.ts';
import { createLogger } from '../src/ops/logger.ts';
import { DEFAULT_PROBE_REPORT_PATH, formatReport, writeReport, type ProbeReport } from '../src/probe/report.ts';
import { runProbe } from '../src/probe/run.ts';
import { redactKeys } from '../src/ops/redact.ts';

/**
 * `npm run probe [-- --out probe-report.json] [-- --no-legacy]`: checks on a real account the
 * facts the mappings take as UNCONFIRMED (src/probe/probes.ts), and, while a legacy REST API
 * answers (LEGACY_REST_URL set), compares one sampled GET of every read route with the
 * translation; the probes of src/probe/v2-probes.ts read it beside NerdGraph. Read-only: to the
 * legacy API GETs, and one POST of a query form to /v2/applications.json, a route v2 documents
 * no write for. Prints one line per probe and per route, and writes the report as
 * JSON (PROBE_REPORT_PATH or --out; /bridge/ shows the last one).
 *
 * NerdGraph as for `npm start` (NEW_RELIC_REGION or NERDGRAPH_URL; src/ops/config.ts) with the
 * user key in NEW_RELIC_API_KEY and the account in NEW_RELIC_ACCOUNT_ID. With neither region nor
 * URL it runs against the embedded sandbox (its demo key and primary account by default) and
 * compares with the sandbox's legacy face. The key is never printed or written.
 */
const SANDBOX_KEY = 'NRAK-SANDBOX-DEMO';
const SANDBOX_ACCOUNT = 1000001;

const ProbeEnv = z.object({
  NEW_RELIC_API_KEY: z.string().regex(/^\S{8,}$/, 'a New Relic user key (NRAK-...)').optional(),
  PROBE_REPORT_PATH: z.string().min(1).optional(),
  LEGACY_REST_URL: z.string().optional(),
});

// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g;
/** Names come from the account: control characters are shown, not obeyed by the terminal. */
const printable = (text: string): string => text.replace(CONTROL, (ch) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}`);

export interface ProbeCliIo {
  env: Record<string, string | undefined>;
  argv: string[];
  out(text: string): void;
  err(text: string): void;
}

/** Runs the probe; resolves with the exit code (0 when the report was written, whatever its verdicts). */
export async function probeMain(io: ProbeCliIo): Promise<{ code: number; report?: ProbeReport }> {
  let args;
  try {
    args = parseArgs({ args: io.argv, options: { out: { type: 'string' }, 'no-legacy': { type: 'boolean', default: false } }, allowPositionals: false }).values;
  } catch {
    io.err('probe: usage: npm run probe [-- --out <file.json>] [-- --no-legacy]\n');
    return { code: 2 };
  }
  const env = ProbeEnv.safeParse(io.env);
  if (!env.success) {
    io.err(`probe: ${env.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`).join('; ')}\n`);
    return { code: 2 };
  }
  let config;
  try {
    config = loadConfig(io.env);
  } catch (error) {
    io.err(`probe: ${error instanceof ConfigError ? error.message : String(error)}\n`);
    return { code: 2 };
  }
  const embedded = config.nerdgraphUrl === undefined;
  const apiKey = env.data.NEW_RELIC_API_KEY ?? (embedded ? SANDBOX_KEY : undefined);
  const accountId = config.defaultAccountId ?? (embedded ? SANDBOX_ACCOUNT : undefined);
  if (apiKey === undefined || accountId === undefined) {
    io.err('probe: set NEW_RELIC_API_KEY (a user key) and NEW_RELIC_ACCOUNT_ID (the account to probe)\n');
    return { code: 2 };
  }
  const redact = (text: string): string => redactKeys(text.split(apiKey).join('[redacted]'));
  // The translation is the gateway itself, every route translated (whatever ROUTE_MODES says).
  const gateway = await buildGateway({ ...config, routeModes: [] }, { logger: createLogger('silent') });
  try {
    const compare = !args['no-legacy'] && (embedded || env.data.LEGACY_REST_URL !== undefined);
    const { loadMappings } = await import('../src/routes/mappings-loader.ts');
    const report = await runProbe({
      nerdgraphUrl: gateway.upstream.graphqlUrl,
      apiKey,
      accountId,
      ...(compare && {
        legacy: {
          url: gateway.upstream.legacyUrl,
          mappings: await loadMappings(),
          translate: async (path: string, headers: Record<string, string>) => gateway.app.request(path, { headers }),
        },
      }),
    });
    const path = args.out ?? env.data.PROBE_REPORT_PATH ?? DEFAULT_PROBE_REPORT_PATH;
    io.out(printable(redact(formatReport(report))));
    await writeReport(path, report);
    io.out(`probe: report written to ${printable(path)}\n`);
    return { code: 0, report };
  } catch (error) {
    io.err(`probe: ${printable(redact(error instanceof Error ? error.message : String(error)))}\n`);
    return { code: 1 };
  } finally {
    await gateway.close();
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  probeMain({ env: process.env, argv: process.argv.slice(2), out: (text) => process.stdout.write(text), err: (text) => process.stderr.write(text) }).then(
    ({ code }) => {
      process.exitCode = code;
    },
    (error: unknown) => {
      process.stderr.write(`probe: ${error instanceof Error ? error.name : 'failure'}\n`);
      process.exitCode = 1;
    },
  );
}
