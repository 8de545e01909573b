/**
 * Synthetic metric timeslice data, the raw rows both sandbox faces compute metric answers from:
 * the public names of timeslices/ (kinds.ts: shapes and clock units; catalog.ts: each owner's
 * metrics; rows.ts: their rows; scopes.ts: scoped rows), read by the NRQL engine (nrql/), the
 * legacy face (legacy/metrics.ts) and the tests.
 */
export * from './timeslices/kinds.ts';
export * from './timeslices/catalog.ts';
export * from './timeslices/rows.ts';
export * from './timeslices/scopes.ts';
