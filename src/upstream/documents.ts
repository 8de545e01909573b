import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Kind, parse, visit, type DocumentNode } from 'graphql';
import { takesLookupTimeout, takesNrqlTimeout } from './nrql-timeout.ts';

/**
 * The static GraphQL documents in queries/: one operation per file, the file named for the
 * operation; shared selections as fragments in queries/fragments/ (one fragment per file,
 * named for the fragment). A document is sent with exactly the fragments it uses. User input
 * never enters a document; it travels in variables.
 */
// Compiled (npm run build), this module is dist/src/upstream/documents.js: queries/ stays at the
// package root, one level further up than from src/.
const COMPILED = import.meta.url.endsWith('.js');
export const QUERIES_DIR = fileURLToPath(new URL(COMPILED ? '../../../queries/' : '../../queries/', import.meta.url));

export interface OperationDocument {
  name: string;
  /** The operation and every fragment it uses, as sent. */
  text: string;
  kind: 'query' | 'mutation';
}

export type OperationDocuments = ReadonlyMap<string, OperationDocument>;

/** A document ready to send: everything but the variables serialised once, at start-up. */
export interface PreparedDocument extends OperationDocument {
  /** The request body up to its variables: `{"query":"...","operationName":"...","variables":`. */
  jsonPrefix: string;
  /** SHA-256 of `text` (hex): names the exact document sent, e.g. in logs or persisted queries. */
  hash: string;
  /** Its nrql fields read `$timeout`, which the client sets per attempt (nrql-timeout.ts). */
  takesNrqlTimeout: boolean;
  /** It has an optional look-up (`$knownTimeout`, `$withKnown`), which the client sets per attempt (nrql-timeout.ts). */
  takesLookupTimeout: boolean;
}

/** The body and hash of a document, computed once, so a call only serialises its variables. */
export function prepareDocument(document: OperationDocument): PreparedDocument {
  return {
    ...document,
    jsonPrefix: `{"query":${JSON.stringify(document.text)},"operationName":${JSON.stringify(document.name)},"variables":`,
    hash: createHash('sha256').update(document.text).digest('hex'),
    takesNrqlTimeout: takesNrqlTimeout(document.text),
    takesLookupTimeout: takesLookupTimeout(document.text),
  };
}

/** The full JSON request body of one call. */
export function requestBody(document: PreparedDocument, variables: Record<string, unknown>): string {
  return `${document.jsonPrefix}${JSON.stringify(variables)}}`;
}

const graphqlFiles = (dir: string): string[] => (existsSync(dir) ? readdirSync(dir).filter((f) => f.endsWith('.graphql')).sort() : []);

function spreadNames(document: DocumentNode): Set<string> {
  const names = new Set<string>();
  visit(document, { FragmentSpread: (node) => void names.add(node.name.value) });
  return names;
}

/** queries/fragments/*.graphql: fragment name -> its text. */
export function loadFragments(dir: string = join(QUERIES_DIR, 'fragments')): ReadonlyMap<string, string> {
  const fragments = new Map<string, string>();
  for (const file of graphqlFiles(dir)) {
    const text = readFileSync(join(dir, file), 'utf8');
    const definitions = parse(text).definitions;
    const name = basename(file, '.graphql');
    const [fragment] = definitions;
    if (definitions.length !== 1 || fragment?.kind !== Kind.FRAGMENT_DEFINITION || fragment.name.value !== name) {
      throw new Error(`queries/fragments/${file} must hold exactly one fragment named ${name}`);
    }
    fragments.set(name, text.trim());
  }
  return fragments;
}

/** The fragments a document uses, directly or through other fragments, in a stable order. */
function fragmentsUsedBy(document: DocumentNode, fragments: ReadonlyMap<string, string>, file: string): string[] {
  const used = new Set<string>();
  const pending = [...spreadNames(document)];
  while (pending.length > 0) {
    const name = pending.pop() as string;
    if (used.has(name)) continue;
    const text = fragments.get(name);
    if (text === undefined) throw new Error(`queries/${file} uses fragment ${name}, which queries/fragments/ does not define`);
    used.add(name);
    pending.push(...spreadNames(parse(text)));
  }
  return [...used].sort();
}

export function loadDocuments(dir: string = QUERIES_DIR): OperationDocuments {
  const fragments = loadFragments(join(dir, 'fragments'));
  const documents = new Map<string, OperationDocument>();
  for (const file of graphqlFiles(dir)) {
    const source = readFileSync(join(dir, file), 'utf8');
    const document = parse(source);
    const operations = document.definitions.filter((d) => d.kind === Kind.OPERATION_DEFINITION);
    const name = basename(file, '.graphql');
    const [operation] = operations;
    if (operations.length !== 1 || document.definitions.length !== 1 || operation === undefined || operation.name?.value !== name) {
      throw new Error(`queries/${file} must hold exactly one operation named ${name} (shared selections go in queries/fragments/)`);
    }
    if (operation.operation === 'subscription') throw new Error(`queries/${file}: subscriptions are not supported`);
    const text = [source.trim(), ...fragmentsUsedBy(document, fragments, file).map((fragment) => fragments.get(fragment) as string)].join('\n\n');
    documents.set(name, prepareDocument({ name, text: `${text}\n`, kind: operation.operation }));
  }
  return documents;
}
