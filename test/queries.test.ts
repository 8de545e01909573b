import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { Kind, parse, validate, visit } from 'graphql';
import { describe, expect, it } from 'vitest';
import { loadMappings } from '../src/routes/mappings-loader.ts';
import { QUERIES_DIR, loadDocuments } from '../src/upstream/documents.ts';
import { realNerdGraphSchema } from './support/schema.ts';

const files = readdirSync(QUERIES_DIR).filter((f) => f.endsWith('.graphql'));

describe('queries/*.graphql', () => {
  it('exist', () => {
    expect(files.length).toBeGreaterThanOrEqual(4);
  });

  it.each(files)('%s validates against the real NerdGraph schema', (file) => {
    const errors = validate(realNerdGraphSchema(), parse(readFileSync(join(QUERIES_DIR, file), 'utf8')));
    expect(errors.map((e) => e.message)).toEqual([]);
  });

  it.each(files)('%s takes every input as a variable (no literal strings in arguments)', (file) => {
    const literals: string[] = [];
    visit(parse(readFileSync(join(QUERIES_DIR, file), 'utf8')), {
      Argument(node) {
        if (node.value.kind === Kind.STRING) literals.push(node.name.value);
      },
    });
    expect(literals).toEqual([]);
  });

  it('every mapping names an operation that exists, of the right kind', async () => {
    const documents = loadDocuments();
    for (const mapping of await loadMappings()) {
      // An unsupported route sends nothing.
      if (mapping.kind === 'unsupported') continue;
      expect(documents.get(mapping.operation)?.kind, mapping.id).toBe(mapping.method === 'GET' ? 'query' : 'mutation');
    }
  });

  it('entity documents select guid and accountId, so account scoping can be checked', () => {
    for (const name of ['ApplicationsSearch', 'ApplicationByGuid', 'EntityGuidByDomainId', 'ApplicationMetricData', 'ApplicationMetricNames', 'ApplicationDeployments']) {
      const text = loadDocuments().get(name)?.text ?? '';
      expect(text, name).toMatch(/\bguid\b/);
      expect(text, name).toMatch(/\baccountId\b/);
    }
  });
});
