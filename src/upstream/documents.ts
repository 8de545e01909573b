import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { basename, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Kind, parse, visit, type DocumentNode } from 'graphql';
import { takesLookupTimeout, takesNrqlTimeout } from './nrql-timeout.ts';

/**
 * The static GraphQL documents: one operation per file, the file named for the operation. A
 * resource's documents sit in its package beside its routes (mappings/<resource>/*.graphql); the
 * gateway's own (the caller's accounts, the probe) in queries/. Shared selections are fragments,
 * one per file named for the fragment, in a fragments/ folder of a package or of
 * mappings/common/. Names are unique across all of them. A document is sent with exactly the
 * fragments it uses. User input never enters a document; it travels in variables.
 */
// From source the roots are the checkout's queries/ and mappings/; compiled (npm run build copies
// every .graphql beside the compiled modules), dist/queries/ and dist/mappings/: the same two
// levels up from this module either way.
const PACKAGE_ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const DOCUMENT_ROOTS: readonly string[] = [join(PACKAGE_ROOT, 'queries'), join(PACKAGE_ROOT, 'mappings')];

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

/** Every .graphql file under the roots, as absolute paths in a stable order. */
function graphqlFiles(roots: readonly string[]): string[] {
  const found: string[] = [];
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (entry.isDirectory()) walk(join(dir, entry.name));
      else if (entry.name.endsWith('.graphql')) found.push(join(dir, entry.name));
    }
  };
  for (const root of roots) if (existsSync(root)) walk(root);
  return found.sort();
}

const isFragmentFile = (file: string): boolean => basename(join(file, '..')) === 'fragments';
/** A file as its messages name it: relative to the checkout (or to dist/). */
const shown = (file: string): string => relative(PACKAGE_ROOT, file);

function spreadNames(document: DocumentNode): Set<string> {
  const names = new Set<string>();
  visit(document, { FragmentSpread: (node) => void names.add(node.name.value) });
  return names;
}

/** Every fragments/<Name>.graphql under the roots: fragment name -> its text. */
export function loadFragments(roots: readonly string[] = DOCUMENT_ROOTS): ReadonlyMap<string, string> {
  const fragments = new Map<string, string>();
  for (const file of graphqlFiles(roots).filter(isFragmentFile)) {
    const text = readFileSync(file, 'utf8');
    const definitions = parse(text).definitions;
    const name = basename(file, '.graphql');
    const [fragment] = definitions;
    if (definitions.length !== 1 || fragment?.kind !== Kind.FRAGMENT_DEFINITION || fragment.name.value !== name) {
      throw new Error(`${shown(file)} must hold exactly one fragment named ${name}`);
    }
    if (fragments.has(name)) throw new Error(`two fragments are named ${name} (${shown(file)} is the second)`);
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
    if (text === undefined) throw new Error(`${shown(file)} uses fragment ${name}, which no fragments/ folder defines`);
    used.add(name);
    pending.push(...spreadNames(parse(text)));
  }
  return [...used].sort();
}

export function loadDocuments(roots: readonly string[] = DOCUMENT_ROOTS): OperationDocuments {
  const fragments = loadFragments(roots);
  const documents = new Map<string, OperationDocument>();
  for (const file of graphqlFiles(roots).filter((f) => !isFragmentFile(f))) {
    const source = readFileSync(file, 'utf8');
    const document = parse(source);
    const operations = document.definitions.filter((d) => d.kind === Kind.OPERATION_DEFINITION);
    const name = basename(file, '.graphql');
    const [operation] = operations;
    if (operations.length !== 1 || document.definitions.length !== 1 || operation === undefined || operation.name?.value !== name) {
      throw new Error(`${shown(file)} must hold exactly one operation named ${name} (shared selections go in a fragments/ folder)`);
    }
    if (operation.operation === 'subscription') throw new Error(`${shown(file)}: subscriptions are not supported`);
    if (documents.has(name)) throw new Error(`two documents are named ${name} (${shown(file)} is the second)`);
    const text = [source.trim(), ...fragmentsUsedBy(document, fragments, file).map((fragment) => fragments.get(fragment) as string)].join('\n\n');
    documents.set(name, prepareDocument({ name, text: `${text}\n`, kind: operation.operation }));
  }
  return documents;
}
