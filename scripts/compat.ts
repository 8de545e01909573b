import { pathToFileURL } from 'node:url';
import { costTable } from '../src/routes/compat-costs.ts';
import { fullReport, routeTable } from '../src/routes/compat-report.ts';
import { loadInventory } from '../src/routes/inventory.ts';
import { loadMappings } from '../src/routes/mappings-loader.ts';
import { measureSandboxCosts } from './compat-costs.ts';

/**
 * `npm run compat`: the compatibility report (src/routes/compat-report.ts), with the NerdGraph
 * cost of every route measured on a sandbox started for the run (scripts/compat-costs.ts).
 * `-- --table` prints only the route table, `-- --costs` only the cost table: the two tables
 * docs/compatibility.md embeds between its markers.
 */
export async function compatMain(argv: readonly string[]): Promise<string> {
  const mappings = await loadMappings();
  if (argv.includes('--table')) return routeTable(mappings);
  const costs = await measureSandboxCosts(mappings);
  if (argv.includes('--costs')) return costTable(costs);
  return fullReport(mappings, loadInventory(), costs);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  process.stdout.write(`${await compatMain(process.argv.slice(2))}\n`);
}
