import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { quoteLiteral } from '../../src/upstream/query-literal.ts';
import { NrqlSyntaxError, parseDateTime, parseNrql, type NrqlCondition, type NrqlExpression, type NrqlQuery } from '../../sandbox/nrql/parser.ts';

const V = 'newrelic.timeslice.value';
const count: NrqlExpression = { type: 'aggregate', function: 'count', field: null };
const appIs = (id: number): NrqlCondition => ({ type: 'compare', attribute: 'appId', operator: '=', value: id });

/** A query AST with the defaults filled in, for compact expectations. */
function query(overrides: Partial<NrqlQuery>): NrqlQuery {
  return { select: [{ expression: count, alias: null }], from: ['Metric'], where: null, facets: [], since: null, until: null, timeseries: null, limit: null, ...overrides };
}

function syntaxError(text: string): string {
  try {
    parseNrql(text);
  } catch (error) {
    expect(error).toBeInstanceOf(NrqlSyntaxError);
    return (error as Error).message;
  }
  throw new Error(`parsed: ${text}`);
}

describe('parseNrql: the gateway’s query shapes', () => {
  it('parses a metric-data query with every clause', () => {
    const text =
      `SELECT count(${V}) AS calls, average(${V}['total']) AS 'avg total', rate(sum(${V}['count']), 1 minute) AS \`per minute\` ` +
      `FROM Metric WHERE appId = 200000235 AND metricTimesliceName IN ('HttpDispatcher', 'Apdex') ` +
      `FACET metricTimesliceName SINCE 1763800000000 UNTIL 1763803600000 TIMESERIES 5 minutes LIMIT 20`;
    expect(parseNrql(text)).toEqual(
      query({
        select: [
          { expression: count, alias: 'calls' },
          { expression: { type: 'aggregate', function: 'average', field: 'total' }, alias: 'avg total' },
          {
            expression: { type: 'rate', of: { type: 'aggregate', function: 'sum', field: 'count' }, per: { amount: 1, unit: 'minute', milliseconds: 60_000 } },
            alias: 'per minute',
          },
        ],
        where: {
          type: 'and',
          left: appIs(200000235),
          right: { type: 'in', attribute: 'metricTimesliceName', negated: false, values: ['HttpDispatcher', 'Apdex'] },
        },
        facets: ['metricTimesliceName'],
        since: 1763800000000,
        until: 1763803600000,
        timeseries: { amount: 5, unit: 'minute', milliseconds: 300_000 },
        limit: 20,
      }),
    );
  });

  it('reads every aggregate and field, and uniques with and without a limit', () => {
    const fns = ['count', 'sum', 'average', 'min', 'max', 'stddev'] as const;
    const fields = ['count', 'total', 'totalExclusive', 'min', 'max', 'sumOfSquares'] as const;
    for (const fn of fns) {
      expect(parseNrql(`SELECT ${fn}(${V}) FROM Metric`).select[0]?.expression).toEqual({ type: 'aggregate', function: fn, field: null });
      for (const field of fields) {
        expect(parseNrql(`SELECT ${fn}(${V}['${field}']) FROM Metric`).select[0]?.expression).toEqual({ type: 'aggregate', function: fn, field });
      }
    }
    expect(parseNrql('SELECT uniques(metricTimesliceName) FROM Metric').select[0]?.expression).toEqual({ type: 'uniques', attribute: 'metricTimesliceName', limit: 1000 });
    expect(parseNrql('SELECT uniques(`odd name`, 10000) FROM Metric').select[0]?.expression).toEqual({ type: 'uniques', attribute: 'odd name', limit: 10000 });
  });

  it('gives * and / precedence over + and -, binds unary minus tightest, and honours parentheses', () => {
    const n = (value: number): NrqlExpression => ({ type: 'number', value });
    expect(parseNrql('SELECT 1 + 2 * 3 - 4 / 5 FROM Metric').select[0]?.expression).toEqual({
      type: 'arithmetic',
      operator: '-',
      left: { type: 'arithmetic', operator: '+', left: n(1), right: { type: 'arithmetic', operator: '*', left: n(2), right: n(3) } },
      right: { type: 'arithmetic', operator: '/', left: n(4), right: n(5) },
    });
    expect(parseNrql('SELECT -(1.5 + 2) * 3 FROM Metric').select[0]?.expression).toEqual({
      type: 'arithmetic',
      operator: '*',
      left: { type: 'negate', operand: { type: 'arithmetic', operator: '+', left: n(1.5), right: n(2) } },
      right: n(3),
    });
  });

  it('parses filter() with a WHERE, inside rate() too', () => {
    const where: NrqlCondition = { type: 'compare', attribute: 'metricTimesliceName', operator: '=', value: 'Errors/all' };
    const filter: NrqlExpression = {
      type: 'filter',
      of: { type: 'arithmetic', operator: '*', left: { type: 'aggregate', function: 'sum', field: null }, right: { type: 'number', value: 1000 } },
      where,
    };
    expect(parseNrql(`SELECT filter(sum(${V}) * 1000, WHERE metricTimesliceName = 'Errors/all') FROM Metric`).select[0]?.expression).toEqual(filter);
    expect(parseNrql(`SELECT rate(filter(count(${V}), WHERE metricTimesliceName = 'Errors/all'), 1 hour) FROM Metric`).select[0]?.expression).toEqual({
      type: 'rate',
      of: { type: 'filter', of: count, where },
      per: { amount: 1, unit: 'hour', milliseconds: 3_600_000 },
    });
  });

  it('parses conditions: AND binds tighter than OR, NOT, IN, NOT IN, IS [NOT] NULL, negative numbers', () => {
    const parsed = parseNrql(
      `SELECT count(${V}) FROM Metric WHERE appId = 1 OR appName != 'x' AND NOT (accountId NOT IN (-2, 3) OR ${V} IS NOT NULL) AND entity.guid IS NULL`,
    );
    expect(parsed.where).toEqual({
      type: 'or',
      left: appIs(1),
      right: {
        type: 'and',
        left: {
          type: 'and',
          left: { type: 'compare', attribute: 'appName', operator: '!=', value: 'x' },
          right: {
            type: 'not',
            operand: {
              type: 'or',
              left: { type: 'in', attribute: 'accountId', negated: true, values: [-2, 3] },
              right: { type: 'isNull', attribute: V, negated: true },
            },
          },
        },
        right: { type: 'isNull', attribute: 'entity.guid', negated: false },
      },
    });
  });

  it('takes keywords, function names and units in any case, and clauses in any order', () => {
    const lower = parseNrql(`select COUNT(${V}) from Metric limit max timeseries 2 HOURS until 20 since 10 facet appName where appId = 1`);
    expect(lower).toEqual(
      query({ where: appIs(1), facets: ['appName'], since: 10, until: 20, timeseries: { amount: 2, unit: 'hour', milliseconds: 7_200_000 }, limit: 5000 }),
    );
    for (const unit of ['second', 'seconds', 'minute', 'minutes', 'hour', 'hours', 'day', 'days', 'week', 'weeks']) {
      expect(parseNrql(`SELECT count(${V}) FROM Metric TIMESERIES 1 ${unit}`).timeseries).toMatchObject({ unit: unit.replace(/s$/, '') });
    }
  });

  it('decodes string escapes: a backslash makes the next character literal, newlines included', () => {
    const where = parseNrql(`SELECT count(${V}) FROM Metric WHERE appName = 'a\\'b\\\\c\\d\ne'`).where;
    expect(where).toEqual({ type: 'compare', attribute: 'appName', operator: '=', value: "a'b\\cd\ne" });
  });

  it('is plain data: JSON round-trips to an equal AST', () => {
    const ast = parseNrql(`SELECT filter(count(${V}), WHERE appId IN (1, 'two')) AS x, uniques(appName, 5) FROM Metric WHERE appId = 1 TIMESERIES 1 day`);
    expect(JSON.parse(JSON.stringify(ast))).toEqual(ast);
  });
});

describe('parseNrql: syntax errors', () => {
  // [query, the offending token or null for the end of input]; it is the last such token in the text.
  it.each([
    ['', null],
    ['SELECT', null],
    ['SELEKT count(x) FROM Metric', 'SELEKT'],
    [`SELECT count(${V}) FROM Metric WHERE appId = 1 AND`, null],
    [`SELECT count(${V}) FROM Metric WHERE appId = 'abc`, null],
    [`SELECT count(${V}) FROM Metric SINCE 1 SINCE 2`, 'SINCE'],
    [`SELECT count(${V}) FROM Metric SINCE 1 hour`, null],
    [`SELECT count(${V}) FROM Metric SINCE 1 fortnight ago`, 'fortnight'],
    [`SELECT count(${V}) FROM Metric SINCE tomorrow`, 'tomorrow'],
    [`SELECT count(${V}) FROM Metric SINCE '2023-13-01'`, "'2023-13-01'"],
    [`SELECT count(${V}) FROM Metric SINCE '2023-02-30T00:00Z'`, "'2023-02-30T00:00Z'"],
    [`SELECT count(${V}) FROM Metric SINCE '12:34'`, "'12:34'"],
    [`SELECT count(${V}) FROM Metric FACET appName,`, null],
    [`SELECT count(${V}) FROM Metric SINCE 1.5`, '1.5'],
    ['SELECT sum(*) FROM Metric', '*'],
    ['SELECT percentile(duration) FROM Metric', ')'],
    ['SELECT percentile(duration, 101) FROM Metric', '101'],
    [`SELECT count(${V}['bogus']) FROM Metric`, "'bogus'"],
    [`SELECT percentile(${V}, 95) FROM Metric`, 'percentile'],
    ['SELECT appName FROM Metric', 'appName'],
    [`SELECT uniques(appName) + 1 FROM Metric`, '+'],
    [`SELECT count(${V}) FROM Metric TIMESERIES 0 minutes`, '0'],
    [`SELECT count(${V}) FROM Metric TIMESERIES 1 fortnight`, 'fortnight'],
    [`SELECT count(${V}) FROM Metric TIMESERIES minutes`, 'minutes'],
    [`SELECT count(${V}) FROM Metric LIMIT 5001`, '5001'],
    [`SELECT count(${V}) FROM Metric LIMIT 0`, '0'],
    [`SELECT uniques(appName, 10001) FROM Metric`, '10001'],
    [`SELECT count(${V}) FROM Metric WHERE appId == 1`, '='],
    [`SELECT count(${V}) FROM Metric WHERE appId = 1 # comment`, '#'],
    [`SELECT count(${V}) AS select FROM Metric`, 'select'],
    [`SELECT count(${V}) FROM Metric FACET where`, 'where'],
    [`SELECT count(${V}) FROM Metric WHERE \`\` = 1`, '``'],
    [`SELECT count(${V}) FROM Metric WHERE \`open = 1`, null],
    [`SELECT count(${V}) FROM Metric WHERE appId = 1 trailing`, 'trailing'],
  ])('%s', (text, found) => {
    const position = found === null ? text.length : text.lastIndexOf(found);
    const unexpected = found === null ? 'end of input' : `'${found}'`;
    expect(syntaxError(text)).toBe(`NRQL Syntax Error: Error at line 1 position ${position}, unexpected ${unexpected}`);
  });

  it('counts positions from 0', () => {
    expect(syntaxError('SELECT')).toBe('NRQL Syntax Error: Error at line 1 position 6, unexpected end of input');
    expect(syntaxError('SELECT 1 FROM Metric WHERE')).toBe('NRQL Syntax Error: Error at line 1 position 26, unexpected end of input');
    expect(syntaxError('SELECT 1 FROM Metric LIMIT x')).toBe("NRQL Syntax Error: Error at line 1 position 27, unexpected 'x'");
  });

  it('reports the first problem in reading order, even before a lexical one', () => {
    expect(syntaxError('SELECT FROM Metric WHERE #')).toBe("NRQL Syntax Error: Error at line 1 position 7, unexpected 'FROM'");
  });

  it('counts lines from 1 and positions within the line', () => {
    expect(syntaxError(`SELECT count(${V})\nFROM Metric\n  WHERE x`)).toBe('NRQL Syntax Error: Error at line 3 position 9, unexpected end of input');
  });

  it('exposes the 0-based offset', () => {
    expect(() => parseNrql('SELECT 1 FROM Metric LIMIT x')).toThrowError(expect.objectContaining({ position: 27, found: 'x' }));
  });

  it('refuses absurd nesting or chains with a syntax error, not a stack overflow', () => {
    expect(syntaxError(`SELECT ${'('.repeat(5000)}1${')'.repeat(5000)} FROM Metric`)).toMatch(/^NRQL Syntax Error: Error at line 1 position \d+, unexpected '\('$/);
    expect(syntaxError(`SELECT count(${V}) FROM Metric WHERE ${'NOT '.repeat(5000)}appId = 1`)).toMatch(/unexpected 'NOT'$/);
    expect(syntaxError(`SELECT ${Array(20_000).fill('1').join(' + ')} FROM Metric`)).toMatch(/unexpected '1'$/);
    expect(syntaxError(`SELECT count(${V}) FROM Metric WHERE ${Array(20_000).fill('appId = 1').join(' AND ')}`)).toMatch(/unexpected 'appId'$/);
    // Realistic sizes parse.
    expect(parseNrql(`SELECT ${Array(100).fill('1').join(' + ')} FROM Metric WHERE ${Array(100).fill('appId = 1').join(' OR ')}`).select).toHaveLength(1);
  });
});

describe('parseNrql inverts quoteLiteral', () => {
  // eslint-disable-next-line no-control-regex
  const printable = fc.string({ unit: 'binary', maxLength: 80 }).filter((s) => !/[\u0000-\u001f\u007f]/.test(s));
  const hostileUnits = fc.constantFrom("'", '\\', "\\'", '"', '`', ' AND ', ' OR ', ')', '(', ',', ' WHERE ', 'SINCE 1', "' OR appId = 2 --", '’', 'é', '🙂', '\u2028');
  const hostile = fc.array(fc.oneof(hostileUnits, printable), { maxLength: 8 }).map((parts) => parts.join(''));
  const prefix = `SELECT count(${V}) FROM Metric WHERE appId = 1 AND metricTimesliceName = `;

  it('holds exactly the quoted text, and nothing else in the query changes', () => {
    const benign = parseNrql(`${prefix}'benign'`);
    fc.assert(
      fc.property(fc.oneof(printable, hostile), (text) => {
        const parsed = parseNrql(prefix + quoteLiteral(text));
        const where = parsed.where as Extract<NrqlCondition, { type: 'and' }>;
        expect(where.right).toEqual({ type: 'compare', attribute: 'metricTimesliceName', operator: '=', value: text });
        expect({ ...parsed, where: { ...where, right: null } }).toEqual({ ...benign, where: { ...(benign.where as object), right: null } });
      }),
      { numRuns: 1000 },
    );
  });

  it('keeps every literal of an IN list apart', () => {
    fc.assert(
      fc.property(fc.array(fc.oneof(printable, hostile), { minLength: 1, maxLength: 5 }), (texts) => {
        const parsed = parseNrql(`SELECT count(${V}) FROM Metric WHERE metricTimesliceName IN (${texts.map(quoteLiteral).join(', ')}) AND appId = 1`);
        expect(parsed.where).toEqual({ type: 'and', left: { type: 'in', attribute: 'metricTimesliceName', negated: false, values: texts }, right: appIs(1) });
      }),
      { numRuns: 300 },
    );
  });
});

describe('parseNrql: the general subset', () => {
  it('reads count(*), aggregates of plain attributes, latest and percentile', () => {
    expect(parseNrql(`SELECT count(*), average(duration) AS d, latest(appName), percentile(duration, 50, 99.9), latest(${V}['count']) FROM Transaction, TransactionError`)).toEqual(
      query({
        select: [
          { expression: { type: 'attributeAggregate', function: 'count', attribute: null, percentiles: [] }, alias: null },
          { expression: { type: 'attributeAggregate', function: 'average', attribute: 'duration', percentiles: [] }, alias: 'd' },
          { expression: { type: 'attributeAggregate', function: 'latest', attribute: 'appName', percentiles: [] }, alias: null },
          { expression: { type: 'attributeAggregate', function: 'percentile', attribute: 'duration', percentiles: [50, 99.9] }, alias: null },
          { expression: { type: 'aggregate', function: 'latest', field: 'count' }, alias: null },
        ],
        from: ['Transaction', 'TransactionError'],
      }),
    );
  });

  it.each([
    ['SINCE 1 hour ago', { agoMs: 3_600_000, text: '1 HOUR AGO' }, null],
    ['SINCE 7 DAYS AGO UNTIL 1 day ago', { agoMs: 7 * 86_400_000, text: '7 DAYS AGO' }, { agoMs: 86_400_000, text: '1 DAY AGO' }],
    ['SINCE 30 minutes ago UNTIL NOW', { agoMs: 1_800_000, text: '30 MINUTES AGO' }, { agoMs: 0, text: 'NOW' }],
    ['SINCE 2 months ago', { agoMs: 60 * 86_400_000, text: '2 MONTHS AGO' }, null],
    ['SINCE 1 quarter ago', { agoMs: 91 * 86_400_000, text: '1 QUARTER AGO' }, null],
    ['SINCE 1 year ago', { agoMs: 365 * 86_400_000, text: '1 YEAR AGO' }, null],
    ['SINCE 500 milliseconds ago UNTIL 1702902896789', { agoMs: 500, text: '500 MILLISECONDS AGO' }, 1702902896789],
    // "Set a query's time range": DateTime strings (UTC without a zone) and day references.
    ["SINCE '2023-12-20T00:04Z' UNTIL '2023-12-22T00:03Z'", { atMs: Date.UTC(2023, 11, 20, 0, 4), text: '2023-12-20T00:04Z' }, { atMs: Date.UTC(2023, 11, 22, 0, 3), text: '2023-12-22T00:03Z' }],
    ["SINCE '2023-12-18 12:34:56.789'", { atMs: Date.UTC(2023, 11, 18, 12, 34, 56, 789), text: '2023-12-18 12:34:56.789' }, null],
    ["SINCE '2023-12-18T06:34:56.789-0600'", { atMs: Date.UTC(2023, 11, 18, 12, 34, 56, 789), text: '2023-12-18T06:34:56.789-0600' }, null],
    ["SINCE '2023-12-18T06:34 -06:00'", { atMs: Date.UTC(2023, 11, 18, 12, 34), text: '2023-12-18T06:34 -06:00' }, null],
    ["SINCE '2023-12-18T18:04+05:30'", { atMs: Date.UTC(2023, 11, 18, 12, 34), text: '2023-12-18T18:04+05:30' }, null],
    ["SINCE '2023-12-18'", { atMs: Date.UTC(2023, 11, 18), text: '2023-12-18' }, null],
    ["SINCE '2023-12-18Z'", { atMs: Date.UTC(2023, 11, 18), text: '2023-12-18Z' }, null],
    ["SINCE '2023-12-18-06:00'", { atMs: Date.UTC(2023, 11, 18, 6), text: '2023-12-18-06:00' }, null],
    ['SINCE yesterday UNTIL today', { daysAgo: 1, text: 'YESTERDAY' }, { daysAgo: 0, text: 'TODAY' }],
  ])('reads %s', (clause, since, until) => {
    const parsed = parseNrql(`SELECT count(*) FROM Metric ${clause}`);
    expect([parsed.since, parsed.until]).toEqual([since, until]);
  });

  // A random query of the subset, printed; its AST printed again parses to the same AST.
  const attribute = fc.constantFrom('appName', 'appId', 'host', 'entity.guid', 'metricTimesliceName', 'duration', '`odd name`');
  // eslint-disable-next-line no-control-regex
  const safe = (text: string): boolean => !/[\u0000-\u001f\u007f]/.test(text);
  const literal = fc.oneof(fc.integer({ min: -1000, max: 1000 }).map(String), fc.string({ maxLength: 6 }).filter(safe).map(quoteLiteral));
  const { condition } = fc.letrec((tie) => ({
    condition: fc.oneof(
      { depthSize: 'small', withCrossShrink: true },
      fc.tuple(attribute, fc.constantFrom('=', '!='), literal).map(([a, op, l]) => `${a} ${op} ${l}`),
      fc.tuple(attribute, fc.boolean(), fc.array(literal, { minLength: 1, maxLength: 3 })).map(([a, not, ls]) => `${a} ${not ? 'NOT IN' : 'IN'} (${ls.join(', ')})`),
      fc.tuple(attribute, fc.boolean()).map(([a, not]) => `${a} IS ${not ? 'NOT NULL' : 'NULL'}`),
      fc.tuple(attribute, fc.boolean(), fc.string({ maxLength: 5 }).filter(safe)).map(([a, not, p]) => `${a} ${not ? 'NOT LIKE' : 'LIKE'} ${quoteLiteral(`%${p}`)}`),
      fc.tuple(tie('condition'), fc.constantFrom('AND', 'OR'), tie('condition')).map(([l, op, r]) => `(${String(l)} ${op} ${String(r)})`),
      tie('condition').map((c) => `NOT ${String(c)}`),
    ),
  }));
  const item = fc.oneof(
    fc.constant('count(*)'),
    fc.tuple(fc.constantFrom('sum', 'average', 'min', 'max', 'latest', 'stddev', 'count'), attribute).map(([f, a]) => `${f}(${a})`),
    fc.tuple(attribute, fc.array(fc.integer({ min: 0, max: 100 }), { minLength: 1, maxLength: 3 })).map(([a, ps]) => `percentile(${a}, ${ps.join(', ')})`),
    attribute.map((a) => `uniques(${a})`),
    fc.constantFrom(`count(${V})`, `average(${V}['total'])`, `latest(${V})`),
  );
  const time = fc.oneof(
    fc.integer({ min: 0, max: 2_000_000_000_000 }).map(String),
    fc.tuple(fc.integer({ min: 1, max: 500 }), fc.constantFrom('minute', 'minutes', 'HOURS', 'day', 'weeks', 'month', 'year')).map(([n, u]) => `${n} ${u} ago`),
  );
  const text = fc
    .record({
      items: fc.array(item, { minLength: 1, maxLength: 3 }),
      from: fc.subarray(['Metric', 'Deployment', 'ChangeTrackingEvent', 'Transaction'], { minLength: 1 }),
      where: fc.option(condition, { nil: undefined }),
      facet: fc.option(attribute, { nil: undefined }),
      since: fc.option(time, { nil: undefined }),
      limit: fc.option(fc.integer({ min: 1, max: 5000 }), { nil: undefined }),
    })
    .map(({ items, from, where, facet, since, limit }) =>
      [`SELECT ${items.join(', ')} FROM ${from.join(', ')}`, where && `WHERE ${String(where)}`, facet && `FACET ${facet}`, since && `SINCE ${since}`, limit && `LIMIT ${limit}`]
        .filter(Boolean)
        .join(' '),
    );

  it('parses every query of the subset, and its WHERE printed back parses to the same AST', () => {
    fc.assert(
      fc.property(text, (nrql) => {
        const parsed = parseNrql(nrql);
        if (parsed.where !== null) {
          expect(parseNrql(`SELECT count(*) FROM Metric WHERE ${printCondition(parsed.where)}`).where).toEqual(parsed.where);
        }
      }),
      { numRuns: 500 },
    );
  });
});

function printLiteral(value: string | number): string {
  return typeof value === 'number' ? String(value) : quoteLiteral(value);
}

function printAttribute(name: string): string {
  return /^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$/.test(name) ? name : `\`${name}\``;
}

function printCondition(condition: NrqlCondition): string {
  switch (condition.type) {
    case 'and':
    case 'or':
      return `(${printCondition(condition.left)} ${condition.type.toUpperCase()} ${printCondition(condition.right)})`;
    case 'not':
      return `NOT ${printCondition(condition.operand)}`;
    case 'compare':
      return `${printAttribute(condition.attribute)} ${condition.operator} ${printLiteral(condition.value)}`;
    case 'in':
      return `${printAttribute(condition.attribute)} ${condition.negated ? 'NOT IN' : 'IN'} (${condition.values.map(printLiteral).join(', ')})`;
    case 'isNull':
      return `${printAttribute(condition.attribute)} IS ${condition.negated ? 'NOT NULL' : 'NULL'}`;
    case 'like':
      return `${printAttribute(condition.attribute)} ${condition.negated ? 'NOT LIKE' : 'LIKE'} ${quoteLiteral(condition.pattern)}`;
  }
}

describe('parseNrql: FROM first', () => {
  it('reads FROM … SELECT … as SELECT … FROM …', () => {
    expect(parseNrql(`FROM Metric, Deployment SELECT count(*) WHERE appId = 1 SINCE 2 days ago`)).toEqual(
      parseNrql(`SELECT count(*) FROM Metric, Deployment WHERE appId = 1 SINCE 2 days ago`),
    );
    expect(() => parseNrql('FROM Metric WHERE appId = 1')).toThrowError("NRQL Syntax Error: Error at line 1 position 12, unexpected 'WHERE'");
  });
});

describe('parseNrql: DateTime strings, TIMESERIES AUTO/MAX and several FACET attributes', () => {
  const pad = (value: number, width = 2): string => String(value).padStart(width, '0');
  /** A real instant from 1971 to 2099 (whole ms), and how to write it. */
  const instant = fc.integer({ min: Date.UTC(1971, 0, 1), max: Date.UTC(2099, 11, 31) });
  const offsetMinutes = fc.integer({ min: -14 * 60, max: 14 * 60 });
  const separator = fc.constantFrom('T', ' ');
  const precision = fc.constantFrom('minute', 'second', 'ms');

  it('reads any instant written as a DateTime string, in any zone offset, separator and precision', () => {
    fc.assert(
      fc.property(instant, offsetMinutes, separator, precision, fc.boolean(), fc.boolean(), (ms, offset, sep, unit, colon, spaced) => {
        const truncated = unit === 'minute' ? Math.floor(ms / 60_000) * 60_000 : unit === 'second' ? Math.floor(ms / 1000) * 1000 : ms;
        const local = new Date(truncated + offset * 60_000);
        const date = `${local.getUTCFullYear()}-${pad(local.getUTCMonth() + 1)}-${pad(local.getUTCDate())}`;
        const seconds = unit === 'minute' ? '' : `:${pad(local.getUTCSeconds())}${unit === 'ms' ? `.${pad(local.getUTCMilliseconds(), 3)}` : ''}`;
        const time = `${pad(local.getUTCHours())}:${pad(local.getUTCMinutes())}${seconds}`;
        const sign = offset < 0 ? '-' : '+';
        const zone = offset === 0 && !colon ? 'Z' : `${sign}${pad(Math.floor(Math.abs(offset) / 60))}${colon ? ':' : ''}${pad(Math.abs(offset) % 60)}`;
        const text = `${date}${sep}${time}${spaced ? ' ' : ''}${zone}`;
        expect(parseNrql(`SELECT count(*) FROM Foo SINCE '${text}'`).since).toEqual({ atMs: truncated, text });
        expect(parseDateTime(text)).toBe(truncated);
      }),
      { numRuns: 500 },
    );
  });

  it('reads a DateTime string without a zone as UTC, and refuses days that do not exist', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1971, max: 2099 }), fc.integer({ min: 1, max: 12 }), fc.integer({ min: 1, max: 31 }), (year, month, day) => {
        const text = `${year}-${pad(month)}-${pad(day)}`;
        const real = new Date(Date.UTC(year, month - 1, day)).getUTCDate() === day;
        expect(parseDateTime(text)).toBe(real ? Date.UTC(year, month - 1, day) : null);
        expect(parseDateTime(`${text}T23:59`)).toBe(real ? Date.UTC(year, month - 1, day, 23, 59) : null);
      }),
      { numRuns: 500 },
    );
  });

  it('reads TIMESERIES AUTO, MAX, and a bare TIMESERIES (AUTO) before any clause or at the end', () => {
    expect(parseNrql('SELECT count(*) FROM Foo TIMESERIES AUTO').timeseries).toBe('AUTO');
    expect(parseNrql('SELECT count(*) FROM Foo timeseries max').timeseries).toBe('MAX');
    fc.assert(
      fc.property(fc.subarray(['WHERE appId = 1', 'FACET appName', 'SINCE 1 hour ago', 'UNTIL NOW', 'LIMIT 5'] as const), (clauses) => {
        expect(parseNrql(`SELECT count(*) FROM Foo TIMESERIES ${clauses.join(' ')}`).timeseries).toBe('AUTO');
        expect(parseNrql(`SELECT count(*) FROM Foo ${clauses.join(' ')} TIMESERIES`).timeseries).toBe('AUTO');
      }),
      { numRuns: 100 },
    );
  });

  it('reads FACET of several attributes in order', () => {
    const name = fc.stringMatching(/^[a-z][a-zA-Z0-9_]{0,12}(\.[a-z][a-zA-Z0-9_]{0,8})?$/).filter((word) => !['as', 'and', 'or', 'not', 'in', 'is', 'null', 'like', 'where', 'facet', 'since', 'until', 'timeseries', 'limit', 'select', 'from'].includes(word.toLowerCase()));
    fc.assert(
      fc.property(fc.array(name, { minLength: 1, maxLength: 5 }), (names) => {
        expect(parseNrql(`SELECT count(*) FROM Foo FACET ${names.join(', ')} LIMIT 20`).facets).toEqual(names);
      }),
      { numRuns: 300 },
    );
  });
});
