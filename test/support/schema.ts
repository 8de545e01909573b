import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { buildClientSchema, type GraphQLSchema, type IntrospectionQuery } from 'graphql';

/** The real NerdGraph schema from ../shared (never copied into the repository). */
export const REAL_SCHEMA_PATH = fileURLToPath(new URL('../../../shared/nerdgraph/schema.json', import.meta.url));

let cached: GraphQLSchema | undefined;

export function realNerdGraphSchema(): GraphQLSchema {
  if (!cached) {
    const json = JSON.parse(readFileSync(REAL_SCHEMA_PATH, 'utf8')) as { data: IntrospectionQuery };
    // Some types are empty in this introspection (deprecated fields excluded): see reference README.
    cached = buildClientSchema(json.data, { assumeValid: true });
  }
  return cached;
}
