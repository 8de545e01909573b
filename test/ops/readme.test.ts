import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { routeTable } from '../../src/routes/compat-report.ts';
import { loadMappings } from '../../src/routes/mappings-loader.ts';

describe('README.md', () => {
  const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');

  it('embeds the supported-routes table generated from mappings/ (run npm run compat -- --table)', async () => {
    const embedded = /<!-- compat:start -->\n([\s\S]*?)\n<!-- compat:end -->/.exec(readme)?.[1];
    expect(embedded).toBe(routeTable(await loadMappings()));
  });

  it('gives the set-up and test commands CI relies on', () => {
    expect(readme).toContain('npm install && npm start');
    expect(readme).toContain('npm test');
  });
});
