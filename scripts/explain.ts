/**
 * `npm run explain -- '<v2 path and query>' [--method M] [--body JSON] [--account ID] [--json]`:
 * what NerdGraph calls one legacy v2 call becomes, printed for a terminal (the /bridge/explain
 * answer, asked in-process). Against the real NerdGraph when NERDGRAPH_URL or NEW_RELIC_REGION
 * and NEW_RELIC_API_KEY are set; otherwise against an embedded sandbox with its demo key.
 * Queries really run (the translation needs their answers); a write's mutation is recorded,
 * never sent. The key goes only in the request header: it is never printed.
 */
import { parseArgs } from 'node:util';
import { pino } from 'pino';
import { z } from 'zod';
import { createApp } from '../src/app.ts';
import { renderExplanation } from '../src/bridge/explain-render.ts';
import type { Explanation } from '../src/bridge/explanation.ts';
import { createIdentityHasher } from '../src/caller/identity.ts';
import { redactKeys } from '../src/ops/redact.ts';
import { ConfigError, loadConfig, type GatewayConfig } from '../src/ops/config.ts';
import { createMetrics } from '../src/ops/metrics.ts';
import { loadMappings } from '../src/routes/mappings-loader.ts';
import { createNerdGraphClient } from '../src/upstream/client.ts';
import { loadDocuments } from '../src/upstream/documents.ts';

const USAGE = `usage: npm run explain -- '<v2 path and query>' [--method GET|POST|PUT|DELETE] [--body JSON] [--account ID] [--json]
  e.g. npm run explain -- '/v2/applications.json?filter[name]=web'
       npm run explain -- '/v2/applications/123/deployments.json' --method POST --body '{"deployment":{"revision":"v1"}}'
  Real NerdGraph: set NEW_RELIC_REGION=us|eu (or NERDGRAPH_URL) and NEW_RELIC_API_KEY; otherwise an embedded sandbox answers.`;

let secret: string | undefined;

/** Any text printed: the key (when one is set) and anything key-shaped masked. */
const masked = (text: string): string => redactKeys(secret ? text.split(secret).join('[redacted]') : text);

function fail(message: string, code = 1): never {
  process.stderr.write(`explain: ${masked(message)}\n`);
  process.exit(code);
}

interface Upstream {
  url: string;
  apiKey: string;
  /** The embedded sandbox, closed when the command ends. */
  close?: () => Promise<void>;
}

async function upstreamFor(config: GatewayConfig): Promise<Upstream> {
  const apiKey = process.env.NEW_RELIC_API_KEY;
  if (config.nerdgraphUrl) {
    if (!apiKey) fail('NERDGRAPH_URL or NEW_RELIC_REGION is set: set NEW_RELIC_API_KEY to your user key (NRAK-...) too, or unset them to use the sandbox');
    secret = apiKey;
    return { url: config.nerdgraphUrl, apiKey };
  }
  if (apiKey) process.stderr.write('explain: NEW_RELIC_API_KEY is set but no NerdGraph is configured (NEW_RELIC_REGION or NERDGRAPH_URL): using the embedded sandbox and its demo key\n');
  const { createSandbox } = await import('../sandbox/server.ts');
  const { parseApiKeys } = await import('../sandbox/data.ts');
  const sandbox = createSandbox({
    seed: config.sandbox.seed,
    apmApps: config.sandbox.apmApps,
    ...(config.sandbox.apiKeys ? { apiKeys: parseApiKeys(config.sandbox.apiKeys) } : {}),
  });
  const running = await sandbox.listen(0, '127.0.0.1');
  const demoKey = [...sandbox.data.keys.keys()][0];
  if (demoKey === undefined) fail('the sandbox has no API key (SANDBOX_API_KEYS)');
  return { url: `${running.url}/graphql`, apiKey: demoKey, close: running.close };
}

const ErrorBody = z.object({ error: z.object({ title: z.string() }) });

const parseCommandLine = (argv: string[]) =>
  parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      method: { type: 'string' },
      body: { type: 'string' },
      account: { type: 'string' },
      json: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });

/** A v2 error's title, or the start of whatever else the answer is. */
function errorText(text: string): string {
  try {
    const parsed = ErrorBody.safeParse(JSON.parse(text));
    if (parsed.success) return parsed.data.error.title;
  } catch {
    // Not JSON: shown as it is, shortened.
  }
  return text.slice(0, 300);
}

async function main(): Promise<void> {
  let args: ReturnType<typeof parseCommandLine>;
  try {
    args = parseCommandLine(process.argv.slice(2));
  } catch (error) {
    fail(`${(error as Error).message}\n${USAGE}`, 2);
  }
  if (args.values.help) {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  const [request, ...extra] = args.positionals;
  if (request === undefined || extra.length > 0) fail(`give exactly one v2 path and query\n${USAGE}`, 2);

  let config: GatewayConfig;
  try {
    config = loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) fail(error.message);
    throw error;
  }
  const upstream = await upstreamFor(config);
  try {
    const metrics = createMetrics();
    const app = createApp({
      config,
      nerdgraph: createNerdGraphClient({
        url: upstream.url,
        documents: loadDocuments(),
        metrics,
        timeoutMs: config.upstreamTimeoutMs,
        retries: config.upstreamRetries,
        microCache: { ...config.microCache, identityOf: createIdentityHasher() },
      }),
      nerdgraphUrl: upstream.url,
      mappings: await loadMappings(),
      metrics,
      logger: pino({ level: 'silent' }),
    });
    const query = new URLSearchParams({ request });
    if (args.values.method !== undefined) query.set('method', args.values.method);
    if (args.values.body !== undefined) query.set('body', args.values.body);
    const headers: Record<string, string> = { 'X-Api-Key': upstream.apiKey };
    if (args.values.account !== undefined) headers['X-Account-Id'] = args.values.account;
    const response = await app.request(`http://localhost/bridge/explain?${query.toString()}`, { headers });
    const text = await response.text();
    if (response.status !== 200) fail(`${response.status} ${errorText(text)}`);
    // The answer of our own route, in-process: its type is the route's declaration.
    const explanation = JSON.parse(text) as Explanation;
    const printed = args.values.json ? `${JSON.stringify(explanation, null, 2)}\n` : renderExplanation(explanation);
    await new Promise<void>((resolve) => process.stdout.write(masked(printed), () => resolve()));
    if (upstream.close) {
      process.stderr.write(
        `explain: answered by an embedded sandbox that ran for this command only (${upstream.url}); to run the curl commands, start one (npm start) and explain through its /bridge/explain, or set NEW_RELIC_REGION and NEW_RELIC_API_KEY.\n`,
      );
    }
  } finally {
    await upstream.close?.();
  }
}

await main();
// The NerdGraph client keeps connections alive; nothing else is left to wait for.
process.exit(0);
