/**
 * What a query must keep while it reads rows (nrql/engine.ts): its filter() contexts, whether
 * rows, fields or series are needed, its attribute aggregates, and whether it mentions an
 * instance attribute (then series are split per instance: instance-split.ts).
 */
import { TIMESLICE_VALUE, type NrqlCondition, type NrqlExpression, type NrqlQuery } from './query.ts';
/** Attributes of one agent instance's rows; mentioning one splits series by instance. */
export const INSTANCE_ATTRIBUTES = ['host', 'realAgentId', 'instanceName'] as const;
export const INSTANCE_ATTRIBUTE_SET = new Set<string>(INSTANCE_ATTRIBUTES);
/**
 * What accumulation must keep. Context 0 is the WHERE alone; each filter() adds a context
 * whose conditions (its own and those of enclosing filters) a series must also meet.
 */
export interface Plan {
  contexts: NrqlCondition[][];
  contextOf: Map<NrqlExpression, number>;
  /** Some item aggregates values, so rows must be generated (otherwise presence is enough). */
  needsRows: boolean;
  /** Some item aggregates a single field (`v['total']`), so per-field sums are kept. */
  needsFields: boolean;
  /** Some item is uniques(), so cells remember which series they saw. */
  needsSeries: boolean;
  /** Aggregates of plain attributes (count(*), latest(x), percentile(x, 95), …): each cell keeps one accumulator per entry. */
  attributeAggregates: Array<Extract<NrqlExpression, { type: 'attributeAggregate' }>>;
  /** Some item or condition reads newrelic.timeslice.value: the query is about APM timeslices. */
  readsTimeslices: boolean;
  /** The WHERE, a filter(), the FACET or a uniques() reads an instance attribute: series are per instance. */
  byInstance: boolean;
}

function mentionsInstance(condition: NrqlCondition | null): boolean {
  if (condition === null) return false;
  switch (condition.type) {
    case 'and':
    case 'or':
      return mentionsInstance(condition.left) || mentionsInstance(condition.right);
    case 'not':
      return mentionsInstance(condition.operand);
    default:
      return INSTANCE_ATTRIBUTE_SET.has(condition.attribute);
  }
}

function mentionsAttribute(condition: NrqlCondition | null, attribute: string): boolean {
  if (condition === null) return false;
  switch (condition.type) {
    case 'and':
    case 'or':
      return mentionsAttribute(condition.left, attribute) || mentionsAttribute(condition.right, attribute);
    case 'not':
      return mentionsAttribute(condition.operand, attribute);
    default:
      return condition.attribute === attribute;
  }
}

export function planOf(query: NrqlQuery): Plan {
  const plan: Plan = {
    contexts: [[]],
    contextOf: new Map(),
    needsRows: false,
    needsFields: false,
    needsSeries: false,
    attributeAggregates: [],
    readsTimeslices: mentionsAttribute(query.where, TIMESLICE_VALUE),
    byInstance: mentionsInstance(query.where) || query.facets.some((facet) => INSTANCE_ATTRIBUTE_SET.has(facet)),
  };
  const visit = (expression: NrqlExpression, conditions: NrqlCondition[]): void => {
    switch (expression.type) {
      case 'aggregate':
        plan.needsRows = true;
        plan.readsTimeslices = true;
        if (expression.field !== null) plan.needsFields = true;
        return;
      case 'attributeAggregate':
        if (!plan.attributeAggregates.includes(expression)) plan.attributeAggregates.push(expression);
        if (expression.attribute !== null && INSTANCE_ATTRIBUTE_SET.has(expression.attribute)) plan.byInstance = true;
        return;
      case 'uniques':
        plan.needsSeries = true;
        // uniques(host) needs per-instance series as much as FACET host does.
        if (INSTANCE_ATTRIBUTE_SET.has(expression.attribute)) plan.byInstance = true;
        return;
      case 'filter': {
        const inner = [...conditions, expression.where];
        if (mentionsInstance(expression.where)) plan.byInstance = true;
        if (mentionsAttribute(expression.where, TIMESLICE_VALUE)) plan.readsTimeslices = true;
        plan.contextOf.set(expression, plan.contexts.push(inner) - 1);
        visit(expression.of, inner);
        return;
      }
      case 'rate':
        visit(expression.of, conditions);
        return;
      case 'negate':
        visit(expression.operand, conditions);
        return;
      case 'arithmetic':
        visit(expression.left, conditions);
        visit(expression.right, conditions);
        return;
      case 'number':
      case 'attribute':
      case 'wildcard':
        return;
    }
  };
  for (const item of query.select) visit(item.expression, []);
  return plan;
}
