/** What the cached and the distinct scenarios (bench/scenarios.ts, bench/distinct.ts) ask alike. */

export const DEMO_KEY = 'NRAK-SANDBOX-DEMO';

// A fixed 30-minute range ending at the minute the bench starts: every request asks for the
// same 30 timeslices, so the canned upstream's recorded rows stay on the grid for the run.
const rangeEnd = Math.floor(Date.now() / 60_000) * 60_000;
export const RANGE = `from=${new Date(rangeEnd - 30 * 60_000).toISOString()}&to=${new Date(rangeEnd).toISOString()}`;

export const namesQuery = (names: readonly string[]): string => names.map((name) => `names[]=${encodeURIComponent(name)}`).join('&');
