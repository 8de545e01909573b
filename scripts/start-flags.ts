import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/**
 * node's own flags from `npm start` (the V8 heap bound): the bench and the load run start the
 * gateway with them, so they measure it as a newcomer runs it.
 */
export function startNodeFlags(): string[] {
  const pkg = JSON.parse(readFileSync(fileURLToPath(new URL('../package.json', import.meta.url)), 'utf8')) as { scripts: { start: string } };
  return pkg.scripts.start.split(/\s+/).filter((arg) => arg.startsWith('--max-old-space-size='));
}
