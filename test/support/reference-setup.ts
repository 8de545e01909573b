import { SCHEMA_HOWTO, findSchema, hasSharedExamples, schemaRequired } from './schema.ts';

/**
 * vitest globalSetup: runs once per `vitest run`, so a missing schema gives one notice, not one
 * per test file. Importing ./schema.ts already fails the run under REQUIRE_NERDGRAPH_SCHEMA=1.
 */
export default function setup(): void {
  if (schemaRequired()) return;
  const examples = hasSharedExamples ? '' : 'the ../shared example-operation tests';
  if (!findSchema()) {
    process.stdout.write(`notice: skipping the NerdGraph schema tests${examples ? ` and ${examples}` : ''} (no schema found); to run them, ${SCHEMA_HOWTO}\n`);
  } else if (examples) {
    process.stdout.write(`notice: skipping ${examples} (../shared/reference/nerdgraph-examples.graphql not found)\n`);
  }
}
