/** Loads the sandbox SDL (schema.graphql, next to this file) into an executable graphql-js schema. */
import { readFileSync } from 'node:fs';
import { buildSchema, type GraphQLSchema } from 'graphql';

export const SANDBOX_SCHEMA_PATH = new URL('./schema.graphql', import.meta.url);

export function readSandboxSdl(): string {
  return readFileSync(SANDBOX_SCHEMA_PATH, 'utf8');
}

let cachedSchema: GraphQLSchema | undefined;

/**
 * The schema is immutable and validated on build (buildSchema asserts validity), so one
 * instance is shared by every sandbox in the process.
 */
export function loadSandboxSchema(): GraphQLSchema {
  cachedSchema ??= buildSchema(readSandboxSdl());
  return cachedSchema;
}
