import { Kind, parse, visit, type TypeNode } from 'graphql';
import type { OperationDocument } from '../upstream/documents.ts';

/**
 * What one NerdGraph document spends of the NRQL budgets: how many NRQL queries it runs (each
 * `nrql` field selected: `actor.account(id:).nrql(query:)`, however aliased, fragments
 * included) and which of its variables carry NRQL text (declared `Nrql`), for the
 * identical-query budget. Read from the document once; user input never enters a document, so
 * the count is the same for every call of an operation.
 */
export interface NrqlProfile {
  /** NRQL queries one call of the document runs (0: it spends no NRQL budget). */
  queries: number;
  /** Names of the variables declared `Nrql` / `Nrql!`. */
  nrqlVariables: readonly string[];
}

function namedType(type: TypeNode): string {
  return type.kind === Kind.NAMED_TYPE ? type.name.value : namedType(type.type);
}

export function nrqlProfileOf(document: Pick<OperationDocument, 'text'>): NrqlProfile {
  let queries = 0;
  const nrqlVariables: string[] = [];
  visit(parse(document.text), {
    Field: (node) => {
      if (node.name.value === 'nrql') queries++;
    },
    VariableDefinition: (node) => {
      if (namedType(node.type) === 'Nrql') nrqlVariables.push(node.variable.name.value);
    },
  });
  return { queries, nrqlVariables };
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

/** The NRQL texts a call sends (one per `Nrql` variable given as a string). */
export function nrqlTextsOf(profile: NrqlProfile, variables: Record<string, unknown>): string[] {
  return profile.nrqlVariables.map((name) => variables[name]).filter((text): text is string => typeof text === 'string');
}
