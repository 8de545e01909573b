import { type V2KeyType, v2KeysOf } from '../../src/mapping-api.ts';

/**
 * SHAPES §6; CG key_transactions_test.go (list and show: application_summary with five keys,
 * no host or instance counts, which SW's shared AppSummaryResponse type lists but no real
 * answer holds); SW KeyTransactionResponseType for end_user_summary.
 */
const KEY_TRANSACTION: Record<string, V2KeyType> = {
  id: 'int',
  name: 'string',
  transaction_name: 'string',
  health_status: 'string',
  reporting: 'bool',
  last_reported_at: 'time',
  application_summary: 'object',
  'application_summary.response_time': 'num',
  'application_summary.throughput': 'num',
  'application_summary.error_rate': 'num',
  'application_summary.apdex_target': 'num',
  'application_summary.apdex_score': 'num',
  end_user_summary: 'object',
  'end_user_summary.response_time': 'num',
  'end_user_summary.throughput': 'num',
  'end_user_summary.apdex_target': 'num',
  'end_user_summary.apdex_score': 'num',
  links: 'object',
  'links.application': 'int',
};
const KEY_TRANSACTION_SOURCE = 'SHAPES §6; CG pkg/apm/key_transactions_test.go (testListKeyTransactionsResponseJSON, keyTransactionJSON); SW KeyTransactionResponseType';

/** A key transaction's keys under `wrapper`. */
export const keyTransactionKeys = v2KeysOf(KEY_TRANSACTION_SOURCE, KEY_TRANSACTION);
