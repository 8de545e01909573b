/**
 * `npm run schema:pull`: introspects the configured real NerdGraph (NERDGRAPH_URL, or
 * NEW_RELIC_REGION) with the user's key and writes the answer where the schema tests look for
 * it (scripts/schema-path.ts; `--out PATH` to write elsewhere). The key goes only in the
 * Api-Key header: it is never printed, and text from the server is printed with keys masked.
 */
import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, relative, resolve } from 'node:path';
import { getIntrospectionQuery, type IntrospectionQuery } from 'graphql';
import { redactKeys } from '../src/ops/redact.ts';
import { ConfigError, loadConfig } from '../src/ops/config.ts';
import { PULLED_SCHEMA_PATH } from './schema-path.ts';

const TIMEOUT_MS = 60_000;

function fail(message: string): never {
  process.stderr.write(`schema:pull: ${redactKeys(message)}\n`);
  process.exit(1);
}

function outPath(argv: readonly string[]): string {
  const at = argv.indexOf('--out');
  if (at === -1) return PULLED_SCHEMA_PATH;
  const path = argv[at + 1];
  if (!path) fail('--out needs a path');
  return resolve(path);
}

interface IntrospectionAnswer {
  data?: IntrospectionQuery | null;
  errors?: Array<{ message?: unknown }>;
}

async function main(): Promise<void> {
  const out = outPath(process.argv.slice(2));
  const key = process.env.NEW_RELIC_API_KEY || process.env.NEW_RELIC_USER_KEY;
  if (!key) fail('set NEW_RELIC_API_KEY to a New Relic user key (NRAK-...); it is sent only in the Api-Key header');
  let url: string | undefined;
  try {
    url = loadConfig().nerdgraphUrl;
  } catch (error) {
    if (error instanceof ConfigError) fail(error.message);
    throw error;
  }
  if (!url) fail('no NerdGraph configured: set NEW_RELIC_REGION=us (or eu), or NERDGRAPH_URL');

  let response: Response;
  try {
    response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'api-key': key },
      body: JSON.stringify({ query: getIntrospectionQuery(), operationName: 'IntrospectionQuery' }),
      signal: AbortSignal.timeout(TIMEOUT_MS),
    });
  } catch (error) {
    fail(`${url}: ${(error as Error).message}`);
  }
  const text = await response.text();
  let answer: IntrospectionAnswer;
  try {
    answer = JSON.parse(text) as IntrospectionAnswer;
  } catch {
    fail(`${url} answered ${response.status} with a body that is not JSON: ${text.slice(0, 200)}`);
  }
  if (!response.ok || !answer.data?.__schema) {
    const messages = (answer.errors ?? []).map((e) => String(e.message)).join('; ');
    fail(`${url} answered ${response.status}${messages ? `: ${messages.slice(0, 500)}` : ' without a schema'}`);
  }

  // Written whole, then renamed: a run cut short never leaves a half file for the tests to read.
  mkdirSync(dirname(out), { recursive: true });
  const partial = `${out}.partial`;
  writeFileSync(partial, JSON.stringify({ data: answer.data }));
  renameSync(partial, out);
  const types = answer.data.__schema.types.length;
  const shown = relative(process.cwd(), out);
  process.stdout.write(`schema:pull: wrote ${shown.startsWith('..') ? out : shown} (${types} types) from ${url}\n`);
}

await main();
