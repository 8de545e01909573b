import { Kind, parse, validate, visit, type FieldNode, type GraphQLSchema } from 'graphql';
import { describe, expect, it } from 'vitest';
import { loadDocuments, loadFragments } from '../../src/upstream/documents.ts';
import { takesLookupTimeout } from '../../src/upstream/nrql-timeout.ts';
import { FIXTURE_DOCUMENT_ROOTS, loadTestMappings } from '../support/fixture-routes.ts';
import { clientGoSchema as tutoneSchema, hasClientGoSchema as hasTutoneSchema, hasRealSchema, realNerdGraphSchema } from '../support/schema.ts';

const CANNOT_QUERY = /^Cannot query field "(\w+)" on type "(\w+)"\.?/;

/**
 * Every document in queries/ and mappings/, discovered, as the gateway sends it (fragments
 * included), and the stage tests' fixture documents (test/support/fixture-mappings/), held to the same rules.
 */
const documents = [...loadDocuments(FIXTURE_DOCUMENT_ROOTS).values()];

/** Fields whose selection is an entity (or a list of them: entities(guids), entitySearch results) to scope. */
const ENTITY_FIELDS = new Set(['entity', 'entities']);
/** Lists under account(id) whose `entities` are not entities (aiNotifications, aiWorkflows). */
const ACCOUNT_SCOPED_LISTS = new Set(['channels', 'destinations', 'workflows']);

function selectedNames(field: FieldNode): Set<string> {
  const names = new Set<string>();
  for (const selection of field.selectionSet?.selections ?? []) if (selection.kind === Kind.FIELD) names.add(selection.name.value);
  return names;
}

describe('the GraphQL documents (queries/, mappings/*/)', () => {
  it('exist', () => {
    expect(documents.length).toBeGreaterThanOrEqual(10);
  });

  /**
   * Both schema files, each where its fields exist. A document validates against schema.json with
   * no error; or, when it selects a field schema.json was pulled without (a deprecated field such
   * as nrql.evaluationOffset or valueFunction, or the outlier mutations), its only errors against
   * schema.json are "Cannot query field F on type T" for fields schema.json lacks and the tutone
   * schema has, and it validates against the tutone schema with no error at all. Any other error
   * fails, so no document escapes both checks. (The tutone schema is older than schema.json: a
   * document with no deprecated field is held to schema.json alone.)
   */
  it.skipIf(!hasRealSchema).each(documents.map((d) => [d.name, d] as const))('%s validates against the NerdGraph schema files where its fields exist', (_name, document) => {
    const parsed = parse(document.text);
    const current = realNerdGraphSchema();
    const errors = validate(current, parsed);
    if (errors.length === 0) return;
    const fieldsOf = (schema: GraphQLSchema, type: string): Record<string, unknown> | undefined => (schema.getType(type) as { getFields?: () => Record<string, unknown> } | undefined)?.getFields?.();
    const unexplained = errors
      .map((error) => error.message)
      .filter((message) => {
        const [, field, type] = CANNOT_QUERY.exec(message) ?? [];
        if (field === undefined || type === undefined || !hasTutoneSchema) return true;
        return fieldsOf(current, type)?.[field] !== undefined || fieldsOf(tutoneSchema(), type)?.[field] === undefined;
      });
    expect(unexplained).toEqual([]);
    expect(validate(tutoneSchema(), parsed).map((e) => e.message)).toEqual([]);
  });

  it.skipIf(!hasRealSchema || !hasTutoneSchema)('the rule is not vacuous: a field in neither schema fails, one only the tutone schema has passes', () => {
    const only = parse('query($a: Int!, $id: ID!) { actor { account(id: $a) { alerts { nrqlCondition(id: $id) { id nrql { evaluationOffset } } } } } }');
    expect(validate(realNerdGraphSchema(), only).map((e) => e.message)).toEqual([expect.stringMatching(CANNOT_QUERY)]);
    expect(validate(tutoneSchema(), only)).toEqual([]);
    const neither = parse('query($a: Int!, $id: ID!) { actor { account(id: $a) { alerts { nrqlCondition(id: $id) { id nrql { sinceValue } } } } } }');
    expect(validate(tutoneSchema(), neither).length).toBe(1);
  });

  it.each(documents.map((d) => [d.name, d] as const))('%s takes every input as a variable (no literal strings in arguments)', (_name, document) => {
    const literals: string[] = [];
    visit(parse(document.text), {
      Argument(node) {
        if (node.value.kind === Kind.STRING) literals.push(node.name.value);
      },
    });
    expect(literals).toEqual([]);
  });

  // Reads only: a mutation's result names the entity it was sent for, compared by GUID.
  const reads = documents.filter((d) => d.kind === 'query');
  it.each(reads.map((d) => [d.name, d] as const))('%s selects guid and accountId on every entity it reads, so scoping can be checked', (_name, document) => {
    const missing: string[] = [];
    visit(parse(document.text), {
      Field(node, _key, _parent, _path, ancestors) {
        const isEntity = ENTITY_FIELDS.has(node.name.value);
        if (!isEntity || node.selectionSet === undefined) return;
        const names = selectedNames(node);
        // alerts_channels: notification channels, destinations and workflows are read under
        // account(id) and have no GUID (channels): their accountId is what scoping checks.
        const parentField = [...ancestors].reverse().find((node): node is FieldNode => !Array.isArray(node) && (node as { kind?: string }).kind === Kind.FIELD);
        if (parentField && ACCOUNT_SCOPED_LISTS.has(parentField.name.value)) {
          if (!names.has('accountId')) missing.push(node.alias?.value ?? node.name.value);
          return;
        }
        if (!names.has('guid') || !names.has('accountId')) missing.push(node.alias?.value ?? node.name.value);
      },
    });
    expect(missing).toEqual([]);
  });

  // NerdGraph gives a query 5 s unless told otherwise; the client sets
  // $timeout from the request's remaining deadline (src/upstream/client.ts), and an optional
  // look-up's own $knownTimeout, under @include(if: $withKnown) (src/upstream/nrql-timeout.ts).
  it.each(documents.map((d) => [d.name, d] as const))('%s gives every nrql field a timeout variable the client sets', (_name, document) => {
    const without: string[] = [];
    visit(parse(document.text), {
      Field(node) {
        // A query runs NRQL only where it passes one (`nrql(query: ...)`); a NRQL alert condition's
        // `nrql { query }` is a plain object (AlertsNrqlConditionQuery), never a query run.
        if (node.name.value !== 'nrql' || !node.arguments?.some((argument) => argument.name.value === 'query')) return;
        const name = node.alias?.value ?? node.name.value;
        const timeout = node.arguments?.find((argument) => argument.name.value === 'timeout');
        const variable = timeout?.value.kind === Kind.VARIABLE ? timeout.value.name.value : undefined;
        if (variable === 'timeout') return;
        // The look-up's own timeout only for a field the client can leave out, in a document it recognises.
        const included = node.directives?.find((directive) => directive.name.value === 'include');
        const condition = included?.arguments?.find((argument) => argument.name.value === 'if')?.value;
        const leftOutable = condition?.kind === Kind.VARIABLE && condition.name.value === 'withKnown';
        if (variable === 'knownTimeout' && leftOutable && takesLookupTimeout(document.text)) return;
        without.push(name);
      },
    });
    expect(without).toEqual([]);
  });

  it('every fragment is used by some document, and fragments are sent only where used', () => {
    const fragments = loadFragments(FIXTURE_DOCUMENT_ROOTS);
    for (const name of fragments.keys()) {
      const users = documents.filter((d) => d.text.includes(`fragment ${name} on`));
      expect(users.length, name).toBeGreaterThan(0);
      for (const user of users) expect(user.text, `${user.name} carries ${name}`).toContain(`...${name}`);
    }
  });

  it('every mapping names an operation that exists, of the right kind', async () => {
    const byName = loadDocuments(FIXTURE_DOCUMENT_ROOTS);
    for (const mapping of await loadTestMappings('both')) {
      // An unsupported route sends nothing; a passthrough route goes to the legacy REST API.
      if (mapping.kind === 'unsupported' || mapping.kind === 'passthrough') continue;
      expect(byName.get(mapping.operation)?.kind, mapping.id).toBe(mapping.method === 'GET' ? 'query' : 'mutation');
    }
  });
});
