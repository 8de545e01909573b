import { Kind, parse, visit, type DirectiveNode, type TypeNode } from 'graphql';
import type { OperationDocument } from '../upstream/documents.ts';

/**
 * What one NerdGraph document spends of the NRQL budgets: how many NRQL queries it runs (each
 * `nrql` field selected: `actor.account(id:).nrql(query:)`, however aliased, fragments
 * included) and which of its variables carry NRQL text (declared `Nrql`), for the
 * identical-query budget. Read from the document once; user input never enters a document, so
 * the count is the same for every call of an operation, but for `nrql` fields under an
 * `@include(if: $var)` or `@skip(if: $var)`, which count only in the calls that select them.
 */
export interface NrqlProfile {
  /** NRQL queries one call of the document runs when every conditional one is selected (0: it spends no NRQL budget). */
  queries: number;
  /** Names of the variables declared `Nrql` / `Nrql!`. */
  nrqlVariables: readonly string[];
  /** The `nrql` fields under `@include`/`@skip` conditions (on themselves or an enclosing field or inline fragment). */
  conditional: readonly ConditionalNrql[];
}

interface ConditionalNrql {
  /** The Boolean variables of its conditions: selected when every `include` is true and no `skip` is. */
  include: readonly string[];
  skip: readonly string[];
  /** Its `query:` argument's variable, when it is one. */
  queryVariable: string | undefined;
}

/** The variables of a node's `@include(if: $v)` and `@skip(if: $v)` directives. */
function conditionsOf(directives: readonly DirectiveNode[] | undefined): { include: string[]; skip: string[] } {
  const include: string[] = [];
  const skip: string[] = [];
  for (const directive of directives ?? []) {
    const name = directive.name.value;
    if (name !== 'include' && name !== 'skip') continue;
    const condition = directive.arguments?.find((argument) => argument.name.value === 'if')?.value;
    if (condition?.kind !== Kind.VARIABLE) continue;
    (name === 'include' ? include : skip).push(condition.name.value);
  }
  return { include, skip };
}

function namedType(type: TypeNode): string {
  return type.kind === Kind.NAMED_TYPE ? type.name.value : namedType(type.type);
}

export function nrqlProfileOf(document: Pick<OperationDocument, 'text'>): NrqlProfile {
  let queries = 0;
  const nrqlVariables: string[] = [];
  const conditional: ConditionalNrql[] = [];
  // The conditions of the fields and inline fragments enclosing the one visited.
  const enclosing: { include: string[]; skip: string[] }[] = [];
  const enter = (node: { directives?: readonly DirectiveNode[] }): void => {
    enclosing.push(conditionsOf(node.directives));
  };
  const leave = (): void => {
    enclosing.pop();
  };
  visit(parse(document.text), {
    Field: {
      enter: (node) => {
        enter(node);
        if (node.name.value !== 'nrql') return;
        queries++;
        const include = enclosing.flatMap((conditions) => conditions.include);
        const skip = enclosing.flatMap((conditions) => conditions.skip);
        if (include.length === 0 && skip.length === 0) return;
        const query = node.arguments?.find((argument) => argument.name.value === 'query')?.value;
        conditional.push({ include, skip, queryVariable: query?.kind === Kind.VARIABLE ? query.name.value : undefined });
      },
      leave,
    },
    InlineFragment: { enter, leave },
    VariableDefinition: (node) => {
      if (namedType(node.type) === 'Nrql') nrqlVariables.push(node.variable.name.value);
    },
  });
  return { queries, nrqlVariables, conditional };
}

/**
 * What one call spends: its NRQL queries and the NRQL texts it sends, leaving out the
 * conditional `nrql` fields its variables do not select (and a text only they use).
 */
export function nrqlSpentBy(profile: NrqlProfile, variables: Record<string, unknown>): { queries: number; texts: string[] } {
  let queries = profile.queries;
  if (profile.conditional.length === 0) {
    return { queries, texts: profile.nrqlVariables.map((name) => variables[name]).filter((text): text is string => typeof text === 'string') };
  }
  const unsent = new Set<string>();
  const sent = new Set<string>();
  for (const field of profile.conditional) {
    const selected = field.include.every((name) => variables[name] === true) && !field.skip.some((name) => variables[name] === true);
    if (!selected) queries--;
    if (field.queryVariable !== undefined) (selected ? sent : unsent).add(field.queryVariable);
  }
  const texts = profile.nrqlVariables
    .filter((name) => sent.has(name) || !unsent.has(name))
    .map((name) => variables[name])
    .filter((text): text is string => typeof text === 'string');
  return { queries, texts };
}

/** Profiles by document, computed on first use (documents live as long as the client). */
export function createNrqlProfiles(): (document: Pick<OperationDocument, 'text'>) => NrqlProfile {
  const profiles = new WeakMap<object, NrqlProfile>();
  return (document) => {
    let profile = profiles.get(document);
    if (profile === undefined) {
      profile = nrqlProfileOf(document);
      profiles.set(document, profile);
    }
    return profile;
  };
}

/** The account a call's NRQL runs in: its `accountId` variable, when it is one. */
export function accountOf(variables: Record<string, unknown>): number | undefined {
  const value = variables.accountId;
  return typeof value === 'number' && Number.isSafeInteger(value) && value > 0 ? value : undefined;
}
