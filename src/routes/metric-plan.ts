import type { MetricDataMapping } from './metric-mapping.ts';
import { isWindowRelative, metricNamesQuery, timesliceDataQuery, type SelectItem } from '../upstream/nrql.ts';
import type { MetricWindow } from '../v2/metric-window.ts';
import type { TimesliceTarget } from './metric-mapping.ts';

/**
 * The NRQL of one metrics/data.json request (docs/metric-data-rules.md): one query faceted by
 * metric name computes every value of every metric with the formula table, and a second one
 * (the look-up) tells which names the target reported lately. Pure functions of the request.
 */

/** Which alias holds each value of each metric in the NRQL answer. */
export interface QueryPlan {
  items: SelectItem[];
  /** metric name -> [value name, alias] in answer order. */
  columns: Map<string, Array<[string, string]>>;
  /** Aliases whose formula divides by the timeslice's length ({W}): corrected to the window used. */
  windowRelative: Set<string>;
}

/** Every metric has at least this column, so a metric with data always shows up as a facet. */
const PRESENCE: SelectItem = { alias: 'v0', expression: 'count({v})' };

/** A request signature's plan and variables, built once. */
export interface BuiltQuery {
  plan: QueryPlan;
  variables: Record<string, unknown>;
  /** Unique in the process, never reused: names exactly these variables (the client's variablesKey). */
  id: number;
  /** Characters held, for the cache's size bound. */
  size: number;
}

/** Process-wide, so two runners sharing one NerdGraph client never name different variables alike. */
let nextPlanId = 0;

/** The columns of each asked name: its requested values (or all it lists), one alias per distinct formula. */
export function planQuery(mapping: MetricDataMapping, names: readonly string[], requestedValues: readonly string[]): QueryPlan {
  const aliasByExpression = new Map<string, string>([[PRESENCE.expression, PRESENCE.alias]]);
  const columns = new Map<string, Array<[string, string]>>();
  for (const name of names) {
    const formulas = mapping.acceptedFormulasOf(name);
    // Own keys only: `toString` or `__proto__` must not pick up an inherited property.
    const valueNames = requestedValues.length > 0 ? requestedValues.filter((value) => Object.hasOwn(formulas, value)) : Object.keys(mapping.formulasOf(name));
    columns.set(
      name,
      valueNames.map((value) => {
        const expression = formulas[value] as string;
        let alias = aliasByExpression.get(expression);
        if (alias === undefined) {
          alias = `v${aliasByExpression.size}`;
          aliasByExpression.set(expression, alias);
        }
        return [value, alias];
      }),
    );
  }
  const windowRelative = new Set([...aliasByExpression].flatMap(([expression, alias]) => (isWindowRelative(expression) ? [alias] : [])));
  return { items: [...aliasByExpression].map(([expression, alias]) => ({ alias, expression })), columns, windowRelative };
}

/** What a query is built from: the target, the names asked (never empty), the values and the window. */
export interface QueryInputs {
  accountId: number;
  target: TimesliceTarget;
  asked: readonly string[];
  requestedValues: readonly string[];
  window: MetricWindow;
  /** The look-up's window, on whole minutes. */
  lookback: { since: number; until: number };
}

/** The plan and the document's variables: the data query, the name look-up, and whether to run it. */
export function buildQuery(mapping: MetricDataMapping, inputs: QueryInputs): BuiltQuery {
  const { target, asked, window } = inputs;
  const scope = target.scope;
  const plan = planQuery(mapping, asked, inputs.requestedValues);
  const end = window.start + window.widthMs * window.count;
  const variables = {
    accountId: inputs.accountId,
    guid: target.entity.guid,
    data: timesliceDataQuery({
      scope,
      names: asked,
      items: plan.items,
      since: window.start,
      until: end,
      ...(window.summarize ? {} : { timeseriesMs: window.widthMs }),
    }),
    // Whole minutes, so identical requests within a minute share one upstream call.
    known: metricNamesQuery({ scope, names: asked, ...inputs.lookback }),
    // The client leaves the look-up out when the time left cannot cover it (nrql-timeout.ts).
    withKnown: true,
  };
  // Ids are never reused (a plan evicted and built again gets a new one), so an id names
  // exactly one set of variables for the life of the process.
  return { plan, variables, id: nextPlanId++, size: variables.data.length + variables.known.length };
}
