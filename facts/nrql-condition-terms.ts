/**
 * NRQL condition terms as facts: data only, no logic, and no imports. NerdGraph's term enums
 * (AlertsNrqlConditionTermsOperator, AlertsNrqlConditionThresholdOccurrences) and the words
 * REST v2 writes for them (alerts-conditions-api-field-names.mdx: terms[operator] above,
 * above_or_equals, below, below_or_equals, equal, not_equals; terms[time_function] all, any).
 * The gateway (mappings/alerts-conditions/nrql-conditions.ts) and the sandbox's NerdGraph face
 * (sandbox/nrql-condition-fields.ts) read the same table.
 */
export const NRQL_OPERATOR_WORDS: Readonly<Record<string, string>> = {
  ABOVE: 'above',
  ABOVE_OR_EQUALS: 'above_or_equals',
  BELOW: 'below',
  BELOW_OR_EQUALS: 'below_or_equals',
  EQUALS: 'equal',
  NOT_EQUALS: 'not_equals',
};

export const NRQL_OCCURRENCE_WORDS: Readonly<Record<string, string>> = { ALL: 'all', AT_LEAST_ONCE: 'any' };
