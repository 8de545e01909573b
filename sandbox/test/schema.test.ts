/**
 * The sandbox SDL must be a subset of the real NerdGraph schema, so a document that runs
 * against the sandbox is valid against NerdGraph. The real schema is reference data, never
 * copied into the repo (test/support/schema.ts says where it comes from); without it these
 * tests are skipped, except in CI (.ci/run), where a missing schema fails the run.
 */
import { readFileSync } from 'node:fs';
import {
  Kind,
  buildSchema,
  isEnumType,
  isInputObjectType,
  isInterfaceType,
  isNonNullType,
  isObjectType,
  isScalarType,
  isSpecifiedScalarType,
  parse,
  print,
  validate,
  type DocumentNode,
  type GraphQLArgument,
  type GraphQLField,
  type GraphQLInputField,
  type GraphQLNamedType,
  type GraphQLSchema,
} from 'graphql';
import { beforeAll, describe, expect, it } from 'vitest';
import { createSandbox } from '../server.ts';
import { loadSandboxSchema } from '../schema.ts';
import { SHARED_EXAMPLES_PATH, clientGoSchema, hasClientGoSchema, hasRealSchema, hasSharedExamples, realNerdGraphSchema } from '../../test/support/schema.ts';


/**
 * Enum values live NerdGraph gained after the schema files were pulled, each with its source:
 * AlertsIncidentPreference.CUSTOM (../shared/reference/nerdgraph.md §1, quirk 3: newrelic-sb-sdk's
 * 2026-04-19 types).
 */
const NEWER_THAN_SCHEMA_FILES = new Set(['AlertsIncidentPreference.CUSTOM']);

function kindOf(type: GraphQLNamedType): string {
  if (isObjectType(type)) return 'OBJECT';
  if (isInterfaceType(type)) return 'INTERFACE';
  if (isInputObjectType(type)) return 'INPUT_OBJECT';
  if (isEnumType(type)) return 'ENUM';
  if (isScalarType(type)) return 'SCALAR';
  return 'UNION';
}

/** Sandbox-defined named types, without graphql-js built-ins. */
function definedTypes(schema: GraphQLSchema): GraphQLNamedType[] {
  return Object.values(schema.getTypeMap()).filter(
    (type) => !type.name.startsWith('__') && !(isScalarType(type) && isSpecifiedScalarType(type)),
  );
}

function compareArguments(
  where: string,
  mine: readonly GraphQLArgument[],
  real: readonly GraphQLArgument[],
  problems: string[],
): void {
  for (const arg of mine) {
    const realArg = real.find((candidate) => candidate.name === arg.name);
    if (!realArg) {
      problems.push(`${where}(${arg.name}) does not exist`);
      continue;
    }
    if (String(arg.type) !== String(realArg.type)) problems.push(`${where}(${arg.name}): ${arg.type} vs real ${realArg.type}`);
    if (JSON.stringify(arg.defaultValue) !== JSON.stringify(realArg.defaultValue)) {
      problems.push(`${where}(${arg.name}) default ${JSON.stringify(arg.defaultValue)} vs real ${JSON.stringify(realArg.defaultValue)}`);
    }
  }
  // A required real argument left out would make real documents invalid here.
  for (const realArg of real) {
    if (isNonNullType(realArg.type) && realArg.defaultValue === undefined && !mine.some((arg) => arg.name === realArg.name)) {
      problems.push(`${where} is missing required argument ${realArg.name}`);
    }
  }
}

function compareFields(
  typeName: string,
  mine: Record<string, GraphQLField<unknown, unknown> | GraphQLInputField>,
  real: Record<string, GraphQLField<unknown, unknown> | GraphQLInputField>,
  problems: string[],
): void {
  for (const field of Object.values(mine)) {
    const realField = real[field.name];
    if (!realField) {
      problems.push(`${typeName}.${field.name} does not exist`);
      continue;
    }
    if (String(field.type) !== String(realField.type)) {
      problems.push(`${typeName}.${field.name}: ${field.type} vs real ${realField.type}`);
    }
    if ('args' in field && 'args' in realField) compareArguments(`${typeName}.${field.name}`, field.args, realField.args, problems);
    if ('defaultValue' in field && 'defaultValue' in realField && JSON.stringify(field.defaultValue) !== JSON.stringify(realField.defaultValue)) {
      problems.push(`${typeName}.${field.name} default differs`);
    }
  }
}

function subsetProblems(mine: GraphQLSchema, real: GraphQLSchema): string[] {
  const problems: string[] = [];
  for (const type of definedTypes(mine)) {
    const realType = real.getType(type.name);
    if (!realType) {
      problems.push(`type ${type.name} does not exist`);
      continue;
    }
    if (kindOf(type) !== kindOf(realType)) {
      problems.push(`${type.name} is ${kindOf(type)}, real is ${kindOf(realType)}`);
      continue;
    }
    if ((isObjectType(type) || isInterfaceType(type)) && (isObjectType(realType) || isInterfaceType(realType))) {
      compareFields(type.name, type.getFields(), realType.getFields(), problems);
      const realInterfaces = new Set(realType.getInterfaces().map((iface) => iface.name));
      for (const iface of type.getInterfaces()) {
        if (!realInterfaces.has(iface.name)) problems.push(`${type.name} implements ${iface.name}, real does not`);
      }
    } else if (isInputObjectType(type) && isInputObjectType(realType)) {
      compareFields(type.name, type.getFields(), realType.getFields(), problems);
      for (const realField of Object.values(realType.getFields())) {
        if (isNonNullType(realField.type) && realField.defaultValue === undefined && !type.getFields()[realField.name]) {
          problems.push(`${type.name} is missing required input field ${realField.name}`);
        }
      }
    } else if (isEnumType(type) && isEnumType(realType)) {
      const realValues = new Set(realType.getValues().map((value) => value.name));
      for (const value of type.getValues()) {
        if (!realValues.has(value.name) && !NEWER_THAN_SCHEMA_FILES.has(`${type.name}.${value.name}`)) problems.push(`${type.name}.${value.name} does not exist`);
      }
    }
  }
  return problems;
}

describe.skipIf(!hasRealSchema)('sandbox SDL against the real NerdGraph schema', () => {
  let real: GraphQLSchema;
  const mine = loadSandboxSchema();

  beforeAll(() => {
    real = realNerdGraphSchema();
  });

  it('uses the real root type names', () => {
    expect(mine.getQueryType()?.name).toBe(real.getQueryType()?.name);
    expect(mine.getMutationType()?.name).toBe(real.getMutationType()?.name);
  });

  it('defines only types, fields, arguments, enum values and interfaces that exist with the same types', () => {
    // schema.json was pulled without deprecated fields (nrql.evaluationOffset, valueFunction, the
    // outlier NRQL condition mutations), which live NerdGraph still serves and New Relic's tools
    // use: what schema.json lacks must then be in the 2025-04-15 client-go schema, alike.
    const problems = subsetProblems(mine, real);
    const olderProblems = hasClientGoSchema ? new Set(subsetProblems(mine, clientGoSchema())) : undefined;
    expect(olderProblems === undefined ? problems : problems.filter((problem) => olderProblems.has(problem))).toEqual([]);
  });

  it('covers the types the gateway relies on', () => {
    for (const name of [
      'Actor', 'Account', 'AccountOutline', 'Entity', 'EntityOutline', 'ApmApplicationEntity',
      'ApmApplicationEntityOutline', 'EntitySearch', 'EntitySearchResult', 'User',
      'AgentEnvironmentApplicationInstanceDetails', 'SortCriterionWithDirection', 'EntitySearchOptions',
      'RootMutationType', 'AgentApplicationSettingsUpdateResult', 'AgentApplicationDeleteResult',
      'ChangeTrackingCreateEventResponse', 'ChangeTrackingDeploymentEvent', 'AgentApplicationCreateMobileResult',
      'AgentApplicationCreateBrowserResult',
    ]) {
      expect(mine.getType(name), name).toBeDefined();
    }
  });

  it('catches a field the real schema does not have (self-check of the comparison)', () => {
    const drifted = loadSandboxSchemaWith('type User { createdAt: Int email: String id: ID name: String timeZoneName: String nickname: String }');
    expect(subsetProblems(drifted, real)).toEqual(['User.id: ID vs real Int', 'User.nickname does not exist']);
  });
});

/** A tiny schema around one User definition, for checking that the comparison sees drift. */
function loadSandboxSchemaWith(userSdl: string): GraphQLSchema {
  return buildSchema(`schema { query: RootQueryType } type RootQueryType { actor: Actor } type Actor { user: User } ${userSdl}`);
}

/** One operation from the shared examples, with the fragments it spreads. */
function exampleOperation(examples: DocumentNode, name: string): DocumentNode {
  const operation = examples.definitions.find(
    (definition) => definition.kind === Kind.OPERATION_DEFINITION && definition.name?.value === name,
  );
  if (!operation) throw new Error(`example ${name} not found`);
  const fragments = examples.definitions.filter(
    (definition) => definition.kind === Kind.FRAGMENT_DEFINITION && JSON.stringify(operation).includes(`"value":"${definition.name.value}"`),
  );
  return { kind: Kind.DOCUMENT, definitions: [operation, ...fragments] };
}

describe.skipIf(!hasSharedExamples)('shared NerdGraph example operations run on the sandbox', () => {
  const examples = hasSharedExamples ? parse(readFileSync(SHARED_EXAMPLES_PATH, 'utf8')) : undefined;
  const sandbox = createSandbox({ seed: 7, apmApps: 30, now: () => 1_750_000_000_000 });

  it.each([
    'ListApmApplications', 'ApmApplicationInstances', 'EntitiesByGuid', 'CurrentUser',
    'DeleteApplication', 'CreateDeploymentEvent', 'CreateMobileApplication', 'CreateBrowserApplication',
  ])('%s validates', (name) => {
    const document = exampleOperation(examples as DocumentNode, name);
    const errors = validate(loadSandboxSchema(), document).map((error) => error.message);
    expect(errors).toEqual([]);
  });

  it('ListApmApplications executes with its sample variables', async () => {
    const document = exampleOperation(examples as DocumentNode, 'ListApmApplications');
    const response = await sandbox.app.request('/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'api-key': 'NRAK-SANDBOX-DEMO' },
      body: JSON.stringify({
        query: print(document),
        variables: { query: "domain = 'APM' AND type = 'APPLICATION' AND accountId = 1000001", cursor: null },
      }),
    });
    const body = (await response.json()) as { data: { actor: { entitySearch: { count: number } } }; errors?: unknown };
    expect(body.errors).toBeUndefined();
    expect(body.data.actor.entitySearch.count).toBe(30);
  });
});
