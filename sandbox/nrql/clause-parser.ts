/**
 * The arguments of NRQL's clauses (parser.ts): WHERE conditions (`=`, `!=`, `IN`, `LIKE`,
 * `IS NULL`, `AND`, `OR`, `NOT`), SINCE/UNTIL times (epoch ms, `n units AGO`, NOW, DateTime
 * strings, `today`/`yesterday`) and TIMESERIES steps. Source: "Set a query's time range"
 * (docs.newrelic.com/docs/nrql/using-nrql/query-time-range): months are 30 days, quarters 91,
 * years 365; its "Use a DateTime string" and "Relative temporal time" sections.
 */
import type { DurationUnit, NrqlCondition, NrqlDuration, NrqlLiteral, NrqlTime, NrqlTimeseries } from './query.ts';
import { TokenReader } from './token-reader.ts';

export const UNIT_MS: Record<DurationUnit, number> = { second: 1000, minute: 60_000, hour: 3_600_000, day: 86_400_000, week: 604_800_000 };
/** Units of `n units AGO` ("Set a query's time range"). */
const AGO_UNIT_MS: Record<string, number> = {
  millisecond: 1,
  ...UNIT_MS,
  month: 30 * 86_400_000,
  quarter: 91 * 86_400_000,
  year: 365 * 86_400_000,
};
/** `today` / `yesterday` ("Set a query's time range", relative temporal time): days before the clock's midnight. */
const DAY_REFERENCES: Readonly<Record<string, number>> = { TODAY: 0, YESTERDAY: 1 };
/**
 * The DateTime strings the sandbox reads ("Set a query's time range", Use a DateTime string):
 * `Year-Month[-Day]`, then optionally `T` or a space and `Hour:Minute[:Second[.Fraction]]`,
 * then optionally a zone `Z` or `(+|-)HH[:]MM` (optionally after a space); without a zone, UTC.
 * Not read (a syntax error here): dates without dashes, times without a date, AM/PM, zone IDs.
 */
const DATE_TIME = /^(\d{4})-(\d{2})(?:-(\d{2}))?(?:[T ](\d{1,2}):(\d{2})(?::(\d{2})(?:\.(\d{1,3}))?)?)? ?(Z|[+-]\d{2}:?\d{2})?$/;

/** Epoch ms of a DateTime string, or null when the sandbox does not read it (or it names no real time). */
export function parseDateTime(text: string): number | null {
  const match = DATE_TIME.exec(text);
  if (!match) return null;
  const [, year, month, day = '01', hour = '0', minute = '00', second = '00', fraction = '0', zone = 'Z'] = match;
  const fields = [Number(year), Number(month), Number(day), Number(hour), Number(minute), Number(second)] as const;
  const [y, mo, d, h, mi, se] = fields;
  if (mo < 1 || mo > 12 || d < 1 || h > 23 || mi > 59 || se > 59) return null;
  const local = Date.UTC(y, mo - 1, d, h, mi, se, Number(fraction.padEnd(3, '0')));
  // Date.UTC rolls 31 February over into March: such a day does not exist.
  if (new Date(local).getUTCDate() !== d) return null;
  if (zone === 'Z') return local;
  const digits = zone.replace(':', '');
  const offsetMinutes = Number(digits.slice(1, 3)) * 60 + Number(digits.slice(3, 5));
  if (Number(digits.slice(3, 5)) > 59) return null;
  return local - (zone.startsWith('-') ? -1 : 1) * offsetMinutes * 60_000;
}
export const CLAUSES = ['WHERE', 'FACET', 'SINCE', 'UNTIL', 'TIMESERIES', 'LIMIT'] as const;
export type Clause = (typeof CLAUSES)[number];
/** Conditions, times and steps; Parser (parser.ts) adds the query and its select list. */
export class ClauseParser extends TokenReader {
  /** TIMESERIES: `n unit`, AUTO, MAX, or nothing (AUTO). */
  protected timeseries(): NrqlTimeseries {
    if (this.acceptKeyword('AUTO')) return 'AUTO';
    if (this.acceptKeyword('MAX')) return 'MAX';
    const token = this.peek();
    const bare = token.kind === 'end' || CLAUSES.some((clause) => this.isKeyword(token, clause));
    return bare ? 'AUTO' : this.duration();
  }

  /** SINCE/UNTIL: epoch ms, `n units AGO`, NOW, a quoted DateTime string, `today` or `yesterday`. */
  protected time(): NrqlTime {
    if (this.acceptKeyword('NOW')) return { agoMs: 0, text: 'NOW' };
    const token = this.peek();
    if (token.kind === 'string') {
      const atMs = parseDateTime(token.value);
      if (atMs === null) throw this.unexpected(token);
      this.index++;
      return { atMs, text: token.value };
    }
    const day = token.kind === 'word' && Object.hasOwn(DAY_REFERENCES, token.value.toUpperCase()) ? DAY_REFERENCES[token.value.toUpperCase()] : undefined;
    if (day !== undefined) {
      this.index++;
      return { daysAgo: day, text: token.value.toUpperCase() };
    }
    const amount = this.integer(0, Number.MAX_SAFE_INTEGER);
    const unitToken = this.peek();
    const unit = unitToken.kind === 'word' ? unitToken.value.toLowerCase().replace(/s$/, '') : '';
    // Anything else after the number (the next clause, or a stray word) is not this clause's.
    if (!Object.hasOwn(AGO_UNIT_MS, unit)) return amount;
    this.index++;
    this.keyword('AGO');
    const agoMs = amount * (AGO_UNIT_MS[unit] as number);
    if (!Number.isSafeInteger(agoMs)) throw this.unexpected(token);
    return { agoMs, text: `${amount} ${unit.toUpperCase()}${amount === 1 ? '' : 'S'} AGO` };
  }

  protected duration(): NrqlDuration {
    const amount = this.integer(1, Number.MAX_SAFE_INTEGER);
    const token = this.peek();
    const unit = token.kind === 'word' ? token.value.toLowerCase().replace(/s$/, '') : '';
    if (!Object.hasOwn(UNIT_MS, unit)) throw this.unexpected(token);
    this.index++;
    const milliseconds = amount * UNIT_MS[unit as DurationUnit];
    if (!Number.isSafeInteger(milliseconds)) throw this.unexpected(token);
    return { amount, unit: unit as DurationUnit, milliseconds };
  }

  // ------------------------------------------------ conditions

  protected condition(): NrqlCondition {
    return this.chain(
      () => this.conjunction(),
      () => this.acceptKeyword('OR'),
      (_, left, right) => ({ type: 'or', left, right }),
    );
  }

  private conjunction(): NrqlCondition {
    return this.chain(
      () => this.negation(),
      () => this.acceptKeyword('AND'),
      (_, left, right) => ({ type: 'and', left, right }),
    );
  }

  private negation(): NrqlCondition {
    return this.nested(() => {
      if (this.acceptKeyword('NOT')) return { type: 'not', operand: this.negation() };
      if (this.acceptSymbol('(')) {
        const inner = this.condition();
        this.symbol(')');
        return inner;
      }
      return this.test();
    });
  }

  private test(): NrqlCondition {
    const attribute = this.attribute();
    const operator = this.acceptSymbol('=') ?? this.acceptSymbol('!=');
    if (operator) return { type: 'compare', attribute, operator, value: this.literal() };
    if (this.acceptKeyword('IS')) {
      const negated = this.acceptKeyword('NOT') !== null;
      this.keyword('NULL');
      return { type: 'isNull', attribute, negated };
    }
    const negated = this.acceptKeyword('NOT') !== null;
    if (this.acceptKeyword('LIKE')) {
      const token = this.peek();
      if (token.kind !== 'string') throw this.unexpected(token);
      this.index++;
      return { type: 'like', attribute, negated, pattern: token.value };
    }
    this.keyword('IN');
    this.symbol('(');
    const values = [this.literal()];
    while (this.acceptSymbol(',')) values.push(this.literal());
    this.symbol(')');
    return { type: 'in', attribute, negated, values };
  }

  private literal(): NrqlLiteral {
    const token = this.peek();
    if (token.kind === 'string') {
      this.index++;
      return token.value;
    }
    const negative = this.acceptSymbol('-') !== null;
    const number = this.peek();
    if (number.kind !== 'number') throw this.unexpected(number);
    this.index++;
    return negative ? -Number(number.value) : Number(number.value);
  }

}
