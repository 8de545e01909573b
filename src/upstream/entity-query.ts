import { quoteLiteral } from './query-literal.ts';

/**
 * Builds NerdGraph entity-search query strings from structured conditions. Strings go
 * through quoteLiteral (the one literal function); numbers are re-rendered from safe integers.
 */
export type ConditionValue = string | number | boolean;

export type Condition =
  | { field: string; op: '='; value: ConditionValue }
  | { field: string; op: 'IN'; values: readonly ConditionValue[] }
  | { field: string; op: 'LIKE'; value: string };

// Field names come from mapping modules, never from clients; this guards against a mistake.
const FIELD = /^[A-Za-z][A-Za-z0-9_.]*$/;

function render(value: ConditionValue): string {
  if (typeof value === 'number') {
    if (!Number.isSafeInteger(value)) throw new Error(`entity-search numbers must be safe integers, got ${value}`);
    return String(value);
  }
  if (typeof value === 'boolean') return String(value);
  return quoteLiteral(value);
}

export function entityQuery(conditions: readonly Condition[]): string {
  return conditions
    .map((condition) => {
      if (!FIELD.test(condition.field)) throw new Error(`bad entity-search field ${condition.field}`);
      switch (condition.op) {
        case '=':
          return `${condition.field} = ${render(condition.value)}`;
        case 'LIKE':
          return `${condition.field} LIKE ${render(condition.value)}`;
        case 'IN':
          return `${condition.field} IN (${condition.values.map(render).join(', ')})`;
      }
    })
    .join(' AND ');
}
