import { existsSync, readFileSync } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildClientSchema, GraphQLSchema as Schema, specifiedDirectives, type GraphQLSchema, type IntrospectionQuery } from 'graphql';
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

/**
 * The second schema file beside schema.json: the 2025-04-15 introspection newrelic-client-go's
 * tutone generator uses, which keeps the deprecated fields schema.json was pulled without
 * (nrql.evaluationOffset, valueFunction) and the outlier NRQL condition mutations.
 */
export const CLIENT_GO_SCHEMA_PATH = SHARED_SCHEMA_PATH.replace(/schema\.json$/, 'schema-client-go-2025-04-15.tutone.json');
/** True when the client-go schema file is beside schema.json (in CI, with ../shared, it is). */
export const hasClientGoSchema = existsSync(CLIENT_GO_SCHEMA_PATH);
let tutone: GraphQLSchema | undefined;

interface TutoneType {
  kind: string;
  name: string;
  fields?: Array<{ args?: unknown[] } & Record<string, unknown>>;
  interfaces?: Array<{ name: string }>;
  possibleTypes?: Array<{ name: string; kind: string }>;
  [key: string]: unknown;
}

/**
 * The tutone file is the `__schema` object alone, and leaves out empty lists and false flags
 * (interfaces, args, isDeprecated): put them back, and each interface's possible types from the
 * objects naming it, as graphql-js's buildClientSchema needs them. No type or field is invented.
 */
export function clientGoSchema(): GraphQLSchema {
  if (tutone) return tutone;
  const raw = JSON.parse(readFileSync(CLIENT_GO_SCHEMA_PATH, 'utf8')) as { queryType: { name: string }; mutationType?: { name: string }; types: TutoneType[] };
  const implementers = new Map<string, Array<{ kind: string; name: string }>>();
  for (const type of raw.types) for (const iface of type.interfaces ?? []) implementers.set(iface.name, [...(implementers.get(iface.name) ?? []), { kind: type.kind, name: type.name }]);
  const types = raw.types.map((type) => ({
    ...type,
    ...((type.kind === 'OBJECT' || type.kind === 'INTERFACE') && {
      interfaces: type.interfaces ?? [],
      fields: (type.fields ?? []).map((field) => ({ isDeprecated: false, ...field, args: (field.args ?? []).map((arg) => ({ defaultValue: null, ...(arg as object) })) })),
    }),
    ...(type.kind === 'INTERFACE' && { possibleTypes: type.possibleTypes ?? implementers.get(type.name) ?? [] }),
    ...(type.kind === 'UNION' && { possibleTypes: type.possibleTypes ?? [] }),
    ...(type.kind === 'ENUM' && { enumValues: ((type.enumValues as unknown[] | undefined) ?? []).map((value) => ({ isDeprecated: false, ...(value as object) })) }),
    ...(type.kind === 'INPUT_OBJECT' && { inputFields: ((type.inputFields as unknown[] | undefined) ?? []).map((field) => ({ defaultValue: null, ...(field as object) })) }),
  }));
  const schema = { queryType: raw.queryType, mutationType: raw.mutationType ?? null, subscriptionType: null, types, directives: [] };
  // The file lists no directives: graphql's own (@include, @skip, @deprecated) are NerdGraph's too.
  tutone = new Schema({ ...buildClientSchema({ __schema: schema } as unknown as IntrospectionQuery, { assumeValid: true }).toConfig(), directives: specifiedDirectives });
  return tutone;
}
