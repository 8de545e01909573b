import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import * as titles from '../../facts/v2-titles.ts';
import * as values from '../../facts/v2-values.ts';
import { schemaRequired } from '../support/schema.ts';

/**
 * A fact in facts/v2-titles.ts and facts/v2-values.ts is v2's own wording, read by both the
 * gateway and the sandbox's legacy face: each is checked against the reference it cites
 * (../shared/reference, beside the repository as for the schema tests; required in CI), so a
 * fact reworded by hand fails here rather than on both faces alike.
 */
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const REFERENCE = resolve(ROOT, '../shared/reference');
const hasReference = existsSync(join(REFERENCE, 'rest-v2.md'));
if (!hasReference && schemaRequired()) throw new Error(`REQUIRE_NERDGRAPH_SCHEMA=1 but ${REFERENCE} is missing (../shared is not beside the repository)`);

/** The reference as one text, code marks and line breaks dropped, so a phrase quoted in backticks or split over lines reads as written. */
const referenceText = (): string =>
  readdirSync(REFERENCE)
    .filter((file) => /\.(md|json)$/.test(file))
    .map((file) => readFileSync(join(REFERENCE, file), 'utf8'))
    .join('\n')
    .replace(/`/g, '')
    .replace(/\s+/g, ' ');

const textsOf = (holder: Record<string, unknown>): string[] =>
  Object.values(holder).flatMap((value) => (typeof value === 'string' ? [value] : typeof value === 'object' && value !== null ? textsOf(value as Record<string, unknown>) : []));

describe.skipIf(!hasReference)('facts: v2 wording as the reference gives it', () => {
  it('finds every title word for word', () => {
    const reference = referenceText();
    const all = textsOf(titles);
    expect(all.length).toBeGreaterThan(10);
    expect(all.filter((title) => !reference.includes(title))).toEqual([]);
  });

  it('finds every link template with its key, as JSON or as the shapes list it', () => {
    const reference = referenceText();
    const links = [values.APPLICATION_LINKS, values.APPLICATION_HOST_LINKS, values.APPLICATION_INSTANCE_LINKS, values.KEY_TRANSACTION_LINKS, values.DEPLOYMENT_LINKS, values.ALERT_CHANNEL_LINKS];
    // The two instance templates the reference does not give are the host's (facts/v2-values.ts).
    const byAnalogy = ['application_instance.application', 'application_instance.server'];
    const written = (key: string, template: string): boolean => [`"${key}": "${template}"`, `${key} = ${template}`, `${key} (template ${template}`].some((pair) => reference.includes(pair));
    const pairs = links.flatMap((templates) => Object.entries(templates));
    expect(pairs.length).toBeGreaterThan(15);
    expect(pairs.filter(([key, template]) => !byAnalogy.includes(key) && !written(key, template))).toEqual([]);
    expect(byAnalogy.filter((key) => !reference.includes(key))).toEqual([]);
    expect(values.APPLICATION_INSTANCE_LINKS['application_instance.application']).toBe(values.APPLICATION_HOST_LINKS['application_host.application']);
    expect(values.APPLICATION_INSTANCE_LINKS['application_instance.server']).toBe(values.APPLICATION_HOST_LINKS['application_host.server']);
  });

  it('finds every value list in the order the reference lists it', () => {
    const reference = referenceText();
    const documented = [
      values.ALERT_CHANNEL_TYPES,
      values.INCIDENT_PREFERENCES,
      values.ALERT_EVENT_PRODUCTS,
      values.ALERT_EVENT_ENTITY_TYPES,
      // INCIDENT_OPEN is newrelic-client-go's addition, named beside the list.
      values.ALERT_EVENT_TYPES.filter((type) => type !== 'INCIDENT_OPEN'),
    ];
    expect(documented.map((list) => list.join(', ')).filter((list) => !reference.includes(list))).toEqual([]);
    expect(reference).toContain("CG's fixture also has INCIDENT_OPEN");
  });
});
