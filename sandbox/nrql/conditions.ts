/**
 * Attributes and conditions (nrql/engine.ts): what a series' rows carry (app, instance,
 * metric, scope, key transaction), NRQL equality by attribute type (behaviour
 * strictAttributeTypes; ATTRIBUTE_TYPES gives each type's source), LIKE, and the two-valued
 * test of a WHERE or filter() condition on a series or an event.
 */
import type { InstanceShare } from '../instance-split.ts';
import { isMobileOwner, type MetricOwner } from '../timeslices.ts';
import { INSTANCE_ATTRIBUTE_SET } from './plan.ts';
import { TIMESLICE_VALUE, type NrqlCondition, type NrqlLiteral } from './query.ts';
import { rules, type Series } from './scope.ts';
/** Stands for newrelic.timeslice.value: present on every row, equal to no literal. */
const TIMESLICE_VALUE_PRESENT = Symbol('newrelic.timeslice.value');

export function appAttribute(app: MetricOwner, attribute: string): unknown {
  if (isMobileOwner(app)) {
    // Mobile rows: their GUID attribute(s) (behaviours.ts mobileGuidAttribute) and accountId only (see the header on appId).
    const spelling = rules().mobileGuidAttribute;
    if (attribute === 'entityGuid') return spelling === 'entity.guid' ? null : app.guid;
    if (attribute === 'entity.guid') return spelling === 'entityGuid' ? null : app.guid;
    return attribute === 'accountId' ? app.accountId : null;
  }
  switch (attribute) {
    case 'appId':
      return app.id;
    case 'appName':
      return app.name;
    case 'entity.guid':
      return app.guid;
    case 'accountId':
      return app.accountId;
    default:
      return null;
  }
}

export function attributeOf(series: Series, attribute: string): unknown {
  if (attribute === 'metricTimesliceName') return series.metric.name;
  if (attribute === 'scope') return series.scope?.name ?? (rules().unscopedRowsHaveNoScope ? null : '');
  if (attribute === TIMESLICE_VALUE) return TIMESLICE_VALUE_PRESENT;
  if (INSTANCE_ATTRIBUTE_SET.has(attribute)) return instanceAttribute(series.share, attribute);
  if (attribute === 'entity.guid' && series.keyTransaction) return series.keyTransaction.guid;
  return appAttribute(series.app, attribute);
}

function instanceAttribute(share: InstanceShare | null, attribute: string): unknown {
  if (share === null) return null;
  switch (attribute) {
    case 'host':
      return share.host.name;
    case 'realAgentId':
      // A string: the only New Relic document that filters on it quotes it (see ATTRIBUTE_TYPES).
      return String(share.instance.id);
    case 'instanceName':
      return share.instance.instanceName;
    default:
      return null;
  }
}

const likePatterns = new Map<string, RegExp>();

/** NRQL LIKE: `%` is any run of characters, the rest literal; case-sensitive (see parser.ts). */
function likeRegExp(pattern: string): RegExp {
  let regExp = likePatterns.get(pattern);
  if (!regExp) {
    const body = pattern
      .split('%')
      .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
      .join('[\\s\\S]*');
    regExp = new RegExp(`^${body}$`);
    // Patterns come from query text: bound the cache rather than grow it for ever.
    if (likePatterns.size > 1000) likePatterns.clear();
    likePatterns.set(pattern, regExp);
  }
  return regExp;
}

export function isScalar(value: unknown): value is string | number {
  return typeof value === 'string' || typeof value === 'number';
}

/**
 * Equality as NRQL compares attribute values: by type (behaviours.ts strictAttributeTypes), so a
 * numeric attribute never equals a string literal nor a string attribute a number. With the
 * behaviour off, the sandbox's old loose rule: a number and a string compare as text.
 */
export function sameValue(actual: unknown, literal: NrqlLiteral): boolean {
  if (!isScalar(actual)) return false;
  if (typeof actual === typeof literal) return actual === literal;
  return !rules().strictAttributeTypes && String(actual) === String(literal);
}

/**
 * The type of each attribute the sandbox's rows carry, as comparisons see it (sandbox README,
 * "NRQL attribute types"). Source per attribute, or "undocumented".
 */
export const ATTRIBUTE_TYPES: Readonly<Record<string, { type: 'number' | 'string'; source: string }>> = {
  appId: { type: 'number', source: 'MIG-NRQL data query and MIG-NG write it bare (`appId = $APP_ID`); the listing query quotes it (rest-v2.md §1.1)' },
  appName: { type: 'string', source: 'TS-NRQL attribute table' },
  'entity.guid': { type: 'string', source: 'TS-NRQL attribute table' },
  entityGuid: { type: 'string', source: 'mobile rows (behaviours.ts mobileGuidAttribute)' },
  accountId: { type: 'number', source: 'undocumented for Metric; an account id is an Int in NerdGraph' },
  metricTimesliceName: { type: 'string', source: 'TS-NRQL attribute table' },
  host: { type: 'string', source: 'TS-NRQL attribute table' },
  instanceName: { type: 'string', source: 'TS-NRQL attribute table (Java `host:port`)' },
  realAgentId: { type: 'string', source: "undocumented (not in TS-NRQL's table); MIG-NRQL quotes it (`realAgentId = '$AGENT_ID'`)" },
  timestamp: { type: 'number', source: 'epoch ms on every event (NRQL docs)' },
};

/**
 * Two-valued: a test on a missing attribute is false, except IS NULL. `subject` is a series
 * (Metric) or an event (deployment events); `read` gives its attributes.
 */
export function holds<T>(condition: NrqlCondition, subject: T, read: (subject: T, attribute: string) => unknown): boolean {
  switch (condition.type) {
    case 'and':
      return holds(condition.left, subject, read) && holds(condition.right, subject, read);
    case 'or':
      return holds(condition.left, subject, read) || holds(condition.right, subject, read);
    case 'not':
      return !holds(condition.operand, subject, read);
    case 'isNull': {
      const value = read(subject, condition.attribute);
      return (value === null || value === undefined) !== condition.negated;
    }
    case 'compare': {
      const value = read(subject, condition.attribute);
      if (!isScalar(value)) return false;
      return sameValue(value, condition.value) === (condition.operator === '=');
    }
    case 'in': {
      const value = read(subject, condition.attribute);
      if (!isScalar(value)) return false;
      return condition.values.some((literal) => sameValue(value, literal)) !== condition.negated;
    }
    case 'like': {
      const value = read(subject, condition.attribute);
      if (!isScalar(value)) return false;
      return likeRegExp(condition.pattern).test(String(value)) !== condition.negated;
    }
  }
}
