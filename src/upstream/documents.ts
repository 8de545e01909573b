import { readdirSync, readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Kind, parse } from 'graphql';

/**
 * The static GraphQL documents in queries/: one operation per file, the file named for the
 * operation. User input never enters a document; it travels in variables.
 */
export const QUERIES_DIR = fileURLToPath(new URL('../../queries/', import.meta.url));

export interface OperationDocument {
  name: string;
  text: string;
  kind: 'query' | 'mutation';
}

export type OperationDocuments = ReadonlyMap<string, OperationDocument>;

export function loadDocuments(dir: string = QUERIES_DIR): OperationDocuments {
  const documents = new Map<string, OperationDocument>();
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.graphql')).sort()) {
    const text = readFileSync(join(dir, file), 'utf8');
    const operations = parse(text).definitions.filter((d) => d.kind === Kind.OPERATION_DEFINITION);
    const name = basename(file, '.graphql');
    const [operation] = operations;
    if (operations.length !== 1 || operation === undefined || operation.name?.value !== name) {
      throw new Error(`queries/${file} must hold exactly one operation named ${name}`);
    }
    if (operation.operation === 'subscription') throw new Error(`queries/${file}: subscriptions are not supported`);
    documents.set(name, { name, text, kind: operation.operation });
  }
  return documents;
}
