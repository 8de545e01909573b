/**
 * The world's seeded randomness (data.ts): the generator (mulberry32; never Math.random, so the
 * same seed gives the same world down to every decimal), what is drawn from it, and the word
 * lists names and settings are drawn from.
 */
/** mulberry32: tiny, fast and good enough for test data; never Math.random. */
export function createRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export type Random = () => number;

export function intBetween(random: Random, min: number, max: number): number {
  return min + Math.floor(random() * (max - min + 1));
}

export function pick<T>(random: Random, items: readonly T[]): T {
  return items[Math.floor(random() * items.length)] as T;
}

export function round(value: number, decimals: number): number {
  const factor = 10 ** decimals;
  return Math.round(value * factor) / factor;
}

export const LANGUAGES = ['java', 'python', 'ruby', 'nodejs', 'php', 'dotnet', 'go'] as const;
export const ADJECTIVES = [
  'Amber', 'Brisk', 'Calm', 'Daring', 'Eager', 'Frosty', 'Gentle', 'Hidden', 'Ivory', 'Jolly',
  'Keen', 'Lucky', 'Mellow', 'Nimble', 'Olive', 'Proud', 'Quiet', 'Rapid', 'Silent', 'Tidy',
] as const;
export const NOUNS = [
  'Checkout', 'Billing', 'Gateway', 'Inventory', 'Search', 'Payments', 'Ledger', 'Catalog',
  'Shipping', 'Auth', 'Reports', 'Scheduler', 'Mailer', 'Profile', 'Cart', 'Pricing',
] as const;
export const TEAMS = ['Billing', 'Checkout', 'Storefront', 'Platform', 'Data'] as const;
export const COMPONENTS = ['API', 'Worker', 'Web', 'Cron', 'Admin'] as const;
export const APDEX_TARGETS = [0.1, 0.25, 0.5, 1, 2] as const;
export const BROWSER_APDEX_TARGETS = [1, 2, 2.5, 7] as const;
export const PORTS = [0, 80, 8080, 3000] as const;
export const DAY_MS = 24 * 60 * 60 * 1000;

export function shuffled<T>(random: Random, items: readonly T[]): T[] {
  const copy = [...items];
  for (let i = copy.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [copy[i], copy[j]] = [copy[j] as T, copy[i] as T];
  }
  return copy;
}
