/** Loads the sandbox SDL (schema.graphql, next to this file) into an executable graphql-js schema. */
import { readFileSync } from 'node:fs';
import { GraphQLError, GraphQLScalarType, Kind, buildSchema, valueFromASTUntyped, type GraphQLSchema, type ValueNode } from 'graphql';

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
  cachedSchema ??= withStrictScalars(buildSchema(readSandboxSdl()));
  return cachedSchema;
}

/**
 * SDL scalars accept any value by default; NerdGraph's do not. Inputs are checked as
 * NerdGraph checks them (a GUID or an NRQL query is a string, times and durations are
 * numbers), so gateway code that sends the wrong type fails here as it would there.
 */
function withStrictScalars(schema: GraphQLSchema): GraphQLSchema {
  const strict = (name: string, accepts: (value: unknown) => boolean, literalKinds: readonly Kind[]): void => {
    const scalar = schema.getType(name);
    if (!(scalar instanceof GraphQLScalarType)) throw new Error(`sandbox schema lacks scalar ${name}`);
    const reject = (value: unknown): never => {
      throw new GraphQLError(`${name} cannot represent ${JSON.stringify(value) ?? String(value)}`);
    };
    scalar.parseValue = (value: unknown) => (accepts(value) ? value : reject(value));
    scalar.parseLiteral = (node: ValueNode) => {
      if (!literalKinds.includes(node.kind)) return reject(node.kind);
      return node.kind === Kind.STRING ? node.value : Number((node as { value: string }).value);
    };
  };
  strict('EntityGuid', (v) => typeof v === 'string', [Kind.STRING]);
  strict('EpochMilliseconds', (v) => typeof v === 'number' && Number.isInteger(v), [Kind.INT]);
  strict('Seconds', (v) => typeof v === 'number' && Number.isFinite(v), [Kind.INT, Kind.FLOAT]);
  strict('Nrql', (v) => typeof v === 'string', [Kind.STRING]);
  customAttributesMap(schema);
  return schema;
}

/**
 * ChangeTrackingRawCustomAttributesMap: a JSON object (attribute name -> value), as a variable
 * or an object literal. Anything else is refused (the sandbox's choice: NerdGraph documents
 * the scalar as a map of attributes, not what it does with other values).
 */
function customAttributesMap(schema: GraphQLSchema): void {
  const scalar = schema.getType('ChangeTrackingRawCustomAttributesMap');
  if (!(scalar instanceof GraphQLScalarType)) throw new Error('sandbox schema lacks scalar ChangeTrackingRawCustomAttributesMap');
  const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
  const reject = (what: string): never => {
    throw new GraphQLError(`ChangeTrackingRawCustomAttributesMap cannot represent ${what}: an object of attributes is expected`);
  };
  scalar.parseValue = (value: unknown) => (isObject(value) ? value : reject(JSON.stringify(value) ?? String(value)));
  scalar.parseLiteral = (node: ValueNode, variables?: Record<string, unknown> | null) =>
    node.kind === Kind.OBJECT ? valueFromASTUntyped(node, variables) : reject(node.kind);
}
