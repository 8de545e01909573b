import { existsSync, readFileSync } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildClientSchema, type GraphQLSchema, type IntrospectionQuery } from 'graphql';
import { PULLED_SCHEMA_PATH } from '../../scripts/schema-path.ts';

/**
 * The real NerdGraph schema the schema tests validate against. It is never committed; it comes
 * from, in order: ../shared beside the repository (CI and the team's machines), the path in
 * NERDGRAPH_SCHEMA, or the git-ignored file `npm run schema:pull` writes. Without any of them
 * the schema tests are skipped (test/support/reference-setup.ts prints one notice), unless
 * REQUIRE_NERDGRAPH_SCHEMA=1 (.ci/run), which turns "missing" into a failed run.
 */
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const SHARED_SCHEMA_PATH = resolve(ROOT, '../shared/nerdgraph/schema.json');
/** Sample operations from the shared reference docs; only ../shared has them. */
export const SHARED_EXAMPLES_PATH = resolve(ROOT, '../shared/reference/nerdgraph-examples.graphql');

export const SCHEMA_HOWTO = 'run `NEW_RELIC_API_KEY=NRAK-... npm run schema:pull`, or set NERDGRAPH_SCHEMA=/path/to/schema.json, or check out ../shared beside the repository';

export interface SchemaSource {
  path: string;
  origin: '../shared' | 'NERDGRAPH_SCHEMA' | 'schema:pull';
}

/** Where the schema is, or undefined when there is none. A NERDGRAPH_SCHEMA that names no file is an error, not a skip. */
export function findSchema(env: NodeJS.ProcessEnv = process.env): SchemaSource | undefined {
  if (existsSync(SHARED_SCHEMA_PATH)) return { path: SHARED_SCHEMA_PATH, origin: '../shared' };
  if (env.NERDGRAPH_SCHEMA) {
    const path = isAbsolute(env.NERDGRAPH_SCHEMA) ? env.NERDGRAPH_SCHEMA : resolve(ROOT, env.NERDGRAPH_SCHEMA);
    if (!existsSync(path)) throw new Error(`NERDGRAPH_SCHEMA=${env.NERDGRAPH_SCHEMA}: no such file`);
    return { path, origin: 'NERDGRAPH_SCHEMA' };
  }
  if (existsSync(PULLED_SCHEMA_PATH)) return { path: PULLED_SCHEMA_PATH, origin: 'schema:pull' };
  return undefined;
}

export const schemaRequired = (env: NodeJS.ProcessEnv = process.env): boolean => env.REQUIRE_NERDGRAPH_SCHEMA === '1';

const source = findSchema();
if (!source && schemaRequired()) throw new Error(`REQUIRE_NERDGRAPH_SCHEMA=1 but there is no NerdGraph schema: ${SCHEMA_HOWTO}`);

/** True when the schema tests can run: use as `describe.skipIf(!hasRealSchema)` / `it.skipIf`. */
export const hasRealSchema = source !== undefined;
/** True when the shared example operations exist (required in CI like the schema). */
export const hasSharedExamples = existsSync(SHARED_EXAMPLES_PATH);
if (!hasSharedExamples && schemaRequired()) throw new Error(`REQUIRE_NERDGRAPH_SCHEMA=1 but ${SHARED_EXAMPLES_PATH} is missing (../shared is not beside the repository)`);

let cached: GraphQLSchema | undefined;

export function realNerdGraphSchema(): GraphQLSchema {
  if (!source) throw new Error(`no NerdGraph schema: ${SCHEMA_HOWTO}`);
  if (!cached) {
    const json = JSON.parse(readFileSync(source.path, 'utf8')) as { data: IntrospectionQuery };
    // Some types are empty in this introspection (deprecated fields excluded): see reference README.
    cached = buildClientSchema(json.data, { assumeValid: true });
  }
  return cached;
}
