import { fileURLToPath } from 'node:url';

/** Where `npm run schema:pull` writes the real NerdGraph schema (git-ignored, never committed). */
export const PULLED_SCHEMA_PATH = fileURLToPath(new URL('../.cache/nerdgraph/schema.json', import.meta.url));
