import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { z } from 'zod';
import { checkedParse, checkedParseOrThrow, compileCheck, type CompiledCheck } from '../../src/upstream/compiled-check.ts';
import { parseAnswer } from '../../src/upstream/answer.ts';
import { deepFreeze } from '../../src/upstream/micro-cache.ts';
import { SearchPage } from '../../src/routes/search-pages.ts';
import { ApmEntity, BrowserApdexEntity, EndUserApdexRow, EndUserApdexRows } from '../../mappings/applications/application.ts';
import { PageDetailsAnswer } from '../../mappings/applications/list.ts';
import { Batches } from '../../mappings/common/guid-batches.ts';
import { KeyTransactionEntity } from '../../mappings/key-transactions/key-transaction.ts';
import { InstancesPage } from '../../mappings/common/app-instances.ts';
import { MetricDataAnswer } from '../../src/routes/metric-answer.ts';

/**
 * The compiled check's contract: a pass means zod succeeds with an output equal to the value
 * less the keys the schema does not name, and checkedParse always decides as safeParse does.
 */

function compiled(schema: z.ZodType): CompiledCheck {
  const check = compileCheck(schema, (why) => {
    throw new Error(`expected a compilable schema: ${why}`);
  });
  if (check === undefined) throw new Error('expected a compilable schema');
  return check;
}

/** Keys a generated value may hold beyond its schema's: only these may be missing from zod's output. */
const EXTRA_KEY = /^(x_extra\d*|__proto__)$/;

/** zod's output against the input: equal (Object.is at the leaves, so -0 is not 0), bar extra keys of the input. */
function equalBarExtraKeys(out: unknown, input: unknown): boolean {
  if (Object.is(out, input)) return true;
  if (Array.isArray(out)) return Array.isArray(input) && out.length === input.length && out.every((item, i) => equalBarExtraKeys(item, input[i]));
  if (typeof out !== 'object' || out === null || typeof input !== 'object' || input === null || Array.isArray(input)) return false;
  const outObject = out as Record<string, unknown>;
  const inObject = input as Record<string, unknown>;
  for (const key of Object.keys(outObject)) if (!Object.hasOwn(inObject, key) || !equalBarExtraKeys(outObject[key], inObject[key])) return false;
  for (const key of Object.keys(inObject)) if (!Object.hasOwn(outObject, key) && !EXTRA_KEY.test(key)) return false;
  return true;
}

/** The contract on one value: what the check says, checked against zod. */
function expectAgreement(schema: z.ZodType, check: CompiledCheck | undefined, value: unknown): void {
  const zod = schema.safeParse(value);
  if (check !== undefined && check(value)) {
    expect(zod.success).toBe(true);
    expect(equalBarExtraKeys(zod.data, value)).toBe(true);
  }
  const fast = checkedParse(schema, value);
  expect(fast.success).toBe(zod.success);
  if (fast.success) expect(equalBarExtraKeys(zod.data, fast.data)).toBe(true);
  else expect(fast.error.issues).toEqual(zod.error?.issues);
}

// ---------------------------------------------------------------------------------------------
// Values generated from a schema: mostly of its shape, with wrong values, missing and extra keys.

interface DefView {
  type: string;
  shape?: Record<string, z.ZodType>;
  element?: z.ZodType;
  options?: z.ZodType[];
  innerType?: z.ZodType;
  in?: z.ZodType;
  checks?: { _zod: { def: { check: string; pattern?: RegExp; maximum?: number; minimum?: number } } }[];
}
const defOf = (schema: z.ZodType): DefView => (schema as unknown as { _zod: { def: DefView } })._zod.def;
const valuesOf = (schema: z.ZodType): unknown[] => [...((schema as unknown as { _zod: { values?: Set<unknown> } })._zod.values ?? [])];

class NotPlain {
  guid = 'g';
}
/** Values that belong nowhere in particular: edge numbers, the wrong types, objects zod reads oddly. */
const junk: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom<unknown>(undefined, null, 'x', '', 0, -0, -1, 1, 1.5, 2 ** 53, 2 ** 53 - 1, -(2 ** 53), Number.MAX_VALUE, Infinity, -Infinity, NaN, true, false, [], [1], {}),
  fc.constantFrom<() => unknown>(
    () => Object.create(null) as unknown,
    () => new NotPlain(),
    () => Object.create({ guid: 'inherited', accountId: 1 }) as unknown,
    () => new Date(0),
    () => JSON.parse('{"__proto__": {"x": 1}}') as unknown,
  ).map((make) => make()),
);
const edgeNumbers = fc.constantFrom(0, -0, 1, -1, 0.5, 1.5, 2 ** 31, 2 ** 32, 2 ** 53 - 1, 2 ** 53, -(2 ** 53 - 1), -(2 ** 53), 1e308);

/** An object with `fields` (each maybe absent, maybe explicitly undefined) and maybe extra keys, built key by key (`__proto__` included). */
function objectOf(fields: Record<string, fc.Arbitrary<unknown>>): fc.Arbitrary<unknown> {
  const present = fc.record(fields);
  const keys = Object.keys(fields);
  // Mostly every key; now and then one or two left out.
  const absent = keys.length === 0 ? fc.constant<string[]>([]) : fc.oneof({ arbitrary: fc.constant<string[]>([]), weight: 8 }, { arbitrary: fc.subarray(keys, { minLength: 1, maxLength: Math.min(2, keys.length) }), weight: 1 });
  const extra = fc.dictionary(fc.constantFrom('x_extra', 'x_extra2', '__proto__'), fc.jsonValue({ maxDepth: 1 }), { maxKeys: 2 });
  return fc.tuple(present, absent, extra, fc.boolean()).map(([values, dropped, extras, extrasFirst]) => {
    const out: Record<string, unknown> = {};
    const put = (key: string, value: unknown): void => void Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
    if (extrasFirst) for (const [key, value] of Object.entries(extras)) put(key, value);
    for (const [key, value] of Object.entries(values)) if (!dropped.includes(key)) put(key, value);
    if (!extrasFirst) for (const [key, value] of Object.entries(extras)) put(key, value);
    return out;
  });
}

function arbitraryOf(schema: z.ZodType): fc.Arbitrary<unknown> {
  return fc.oneof({ arbitrary: shaped(schema), weight: 30 }, { arbitrary: junk, weight: 1 });
}

function shaped(schema: z.ZodType): fc.Arbitrary<unknown> {
  const def = defOf(schema);
  const checks = def.checks?.map((check) => check._zod.def) ?? [];
  switch (def.type) {
    case 'string': {
      const pattern = checks.find((check) => check.check === 'string_format')?.pattern;
      const strings = fc.oneof(fc.string({ maxLength: 6 }), fc.string({ unit: 'binary', maxLength: 4 }), fc.constantFrom('😀😀', '\uD800', 'ab'));
      return pattern === undefined ? strings : fc.oneof(fc.stringMatching(pattern), strings);
    }
    case 'number':
      return fc.oneof({ arbitrary: fc.integer({ min: 0, max: 3 }), weight: 6 }, { arbitrary: edgeNumbers, weight: 2 }, { arbitrary: fc.integer({ min: -3, max: 3 }), weight: 1 }, { arbitrary: fc.double(), weight: 1 });
    case 'boolean':
      return fc.boolean();
    case 'null':
      return fc.constant(null);
    case 'literal':
    case 'enum':
      return fc.constantFrom(...valuesOf(schema));
    case 'optional':
      return fc.oneof(fc.constant(undefined), arbitraryOf(def.innerType as z.ZodType));
    case 'nullable':
      return fc.oneof(fc.constant(null), arbitraryOf(def.innerType as z.ZodType));
    case 'array': {
      const max = checks.find((check) => check.check === 'max_length')?.maximum;
      return fc.array(arbitraryOf(def.element as z.ZodType), { maxLength: max === undefined ? 4 : max + 1 });
    }
    case 'object':
      return objectOf(Object.fromEntries(Object.entries(def.shape ?? {}).map(([key, field]) => [key, arbitraryOf(field)])));
    case 'union':
      return fc.oneof(...(def.options ?? []).map(arbitraryOf));
    case 'pipe':
      return arbitraryOf(def.in as z.ZodType);
    case 'catch':
      return arbitraryOf(def.innerType as z.ZodType);
    default:
      return fc.jsonValue({ maxDepth: 2 });
  }
}

// ---------------------------------------------------------------------------------------------

/** Small schemas of each kind the compiler follows, and a few it must leave to zod. */
const representative: Record<string, z.ZodType> = {
  'number, int, bounds': z.object({ n: z.number(), i: z.number().int(), nn: z.number().int().nonnegative(), p: z.number().positive(), r: z.number().gte(-1).lt(2), i32: z.int32() }),
  'optional, nullable, nullish': z.object({ o: z.string().optional(), n: z.string().nullable(), b: z.boolean().nullish(), u: z.unknown(), uo: z.unknown().optional(), x: z.exactOptional(z.number().int()).nullable() }),
  'literal, enum, union': z.object({ l: z.literal(['a', 1, null]), e: z.enum(['x', 'y']), u: z.union([z.number(), z.string()]).nullable(), o: z.union([z.string(), z.object({ a: z.number() })]).optional() }),
  'arrays with lengths': z.object({ a: z.array(z.number()).min(1).max(3), s: z.string().min(2).max(3), n: z.array(z.object({ k: z.string() })).nullable() }),
  'strict and loose objects': z.object({ strict: z.strictObject({ a: z.number() }).optional(), loose: z.looseObject({ a: z.number() }).optional(), all: z.object({ a: z.string() }).catchall(z.unknown()).optional() }),
  regex: z.object({ id: z.string().regex(/^[1-9]\d{0,3}$/), g: z.string().regex(/a/g).optional() }),
  catch: z.object({ w: z.object({ b: z.number() }).nullable().optional().catch(undefined), n: z.number().int().catch(0).optional(), a: z.array(z.string().catch('?')) }),
  'transform (uncompilable)': z.object({ n: z.string().transform((text) => text.length) }),
  'default (uncompilable)': z.object({ n: z.number().default(3) }),
  'refine (uncompilable)': z.object({ n: z.number().refine((n) => n !== 2) }),
  'trim (uncompilable)': z.object({ s: z.string().trim() }),
};

/** The list's real answer schemas, and a few more mappings', as the gateway validates them. */
const real: Record<string, z.ZodType> = { ApmEntity, BrowserApdexEntity, EndUserApdexRow, EndUserApdexRows, SearchPage, PageDetailsAnswer, Batches, KeyTransactionEntity, InstancesPage, MetricDataAnswer };

describe('compileCheck', () => {
  it('compiles the answer schemas named here (else every answer of them would still go to zod)', () => {
    for (const [name, schema] of Object.entries(real)) expect(compileCheck(schema), name).toBeTypeOf('function');
  });

  it('leaves to zod what changes the output or runs code: transforms, defaults, refinements, overwrites, pipes, coercion, lazy', () => {
    const withOwnWhen = { message: 'at least one', when: () => true };
    const uncompilable: z.ZodType[] = [
      z.string().transform((text) => text.length),
      z.number().default(1),
      // A catch for an absent key writes its value: the output would gain the key.
      z.object({ n: z.number().catch(0) }),
      z.number().refine((n) => n > 0),
      z.string().trim(),
      z.string().toLowerCase(),
      z.string().pipe(z.string()),
      z.coerce.number(),
      z.lazy(() => z.string()),
      z.preprocess((value) => value, z.string()),
      z.number().multipleOf(2),
      z.url(),
      z.string().startsWith('a'),
      z.record(z.string(), z.number()),
      z.discriminatedUnion('k', [z.object({ k: z.literal('a') }), z.object({ k: z.literal('b') })]),
      z.object({ a: z.number() }).refine(() => true),
      z.object({ a: z.number() }).catchall(z.string()),
      z.object({ toString: z.string() }),
      // zod's types leave `when` out of a length check's parameters; zod itself takes it.
      z.array(z.string()).min(1, withOwnWhen),
      z.string().readonly(),
      // Two options that take objects: zod keeps the first that succeeds, with its own keys.
      z.union([z.object({ a: z.number() }), z.object({ a: z.number(), b: z.number() })]),
      z.union([z.object({ a: z.number() }), z.unknown()]),
      z.object({ inner: z.object({ n: z.number().transform(String) }) }),
    ];
    for (const schema of uncompilable) expect(compileCheck(schema)).toBeUndefined();
  });

  it('gives up on a schema that holds itself rather than recurse forever', () => {
    const Node: z.ZodType = z.object({
      get next() {
        return Node.optional();
      },
    });
    expect(compileCheck(Node)).toBeUndefined();
    expect(checkedParse(Node, { next: { next: {} } }).success).toBe(true);
  });

  it('says why a schema is uncompilable', () => {
    const reasons: string[] = [];
    compileCheck(z.object({ a: z.string().transform(Number) }), (why) => reasons.push(why));
    expect(reasons).toEqual(['a pipe schema']);
  });
});

describe('the compiled check, fixed cases', () => {
  it('numbers: finite only; -0 kept; int is a safe integer; bounds inclusive or not', () => {
    const number = compiled(z.number());
    const int = compiled(z.number().int());
    const nonnegative = compiled(z.number().int().nonnegative());
    const positive = compiled(z.number().positive());
    expect([0, -0, 1.5, -1e308, Number.MAX_VALUE].map(number)).toEqual([true, true, true, true, true]);
    expect([Infinity, -Infinity, NaN, '1', null, undefined].map(number)).toEqual([false, false, false, false, false, false]);
    expect([0, -0, 2 ** 53 - 1, -(2 ** 53 - 1)].map(int)).toEqual([true, true, true, true]);
    expect([1.5, 2 ** 53, -(2 ** 53), 1e300, Infinity].map(int)).toEqual([false, false, false, false, false]);
    expect([0, -0, 1, -1].map(nonnegative)).toEqual([true, true, true, false]);
    expect([0, -0, 0.1].map(positive)).toEqual([false, false, true]);
    expect(compiled(z.int32())(2 ** 31)).toBe(false);
    expect(compiled(z.int32())(2 ** 31 - 1)).toBe(true);
    // -0 passes as -0: zod's output is the same value.
    const parsed = checkedParse(z.number().int(), -0);
    expect(parsed.success && Object.is(parsed.data, -0)).toBe(true);
    for (const value of [0, -0, 1.5, 2 ** 53, 2 ** 53 - 1, Infinity, NaN]) {
      for (const schema of [z.number(), z.number().int(), z.number().int().nonnegative(), z.number().positive()]) expectAgreement(schema, compileCheck(schema), value);
    }
  });

  it('missing, undefined and null: optional takes the first two, nullable the last, a required unknown only a present key', () => {
    const optional = compiled(z.object({ a: z.string().optional() }));
    const nullable = compiled(z.object({ a: z.string().nullable() }));
    const nullish = compiled(z.object({ a: z.string().nullish() }));
    const unknown = compiled(z.object({ a: z.unknown() }));
    const exact = compiled(z.object({ a: z.exactOptional(z.string()) }));
    const cases: [string, unknown][] = [
      ['missing', {}],
      ['undefined', { a: undefined }],
      ['null', { a: null }],
      ['text', { a: 't' }],
    ];
    expect(cases.map(([, value]) => optional(value))).toEqual([true, true, false, true]);
    expect(cases.map(([, value]) => nullable(value))).toEqual([false, false, true, true]);
    expect(cases.map(([, value]) => nullish(value))).toEqual([true, true, true, true]);
    // zod 4 wants a z.unknown() key present (undefined will do).
    expect(cases.map(([, value]) => unknown(value))).toEqual([false, true, true, true]);
    // exactOptional: the key may be missing, but not undefined.
    expect(cases.map(([, value]) => exact(value))).toEqual([true, false, false, true]);
    for (const schema of [z.object({ a: z.string().optional() }), z.object({ a: z.string().nullable() }), z.object({ a: z.string().nullish() }), z.object({ a: z.unknown() }), z.object({ a: z.exactOptional(z.string()) })]) {
      for (const [, value] of cases) expectAgreement(schema, compileCheck(schema), value);
    }
  });

  it('unions zod may answer otherwise than any-option-passes are left to zod: a catch in an option, an exclusive union', () => {
    const cases: Array<[z.ZodType, unknown]> = [
      [z.union([z.string().catch('x'), z.number()]), 5],
      [z.array(z.union([z.number().catch(0), z.string()])), ['a']],
      [z.object({ f: z.union([z.string().catch('x').optional(), z.number()]).optional() }), { f: 5 }],
      [z.xor([z.string(), z.string().max(10)]), 'a'],
    ];
    for (const [schema, value] of cases) {
      expect(compileCheck(schema)).toBeUndefined();
      expect(checkedParse(schema, value)).toEqual(schema.safeParse(value));
    }
  });

  it('unions: any option, whatever the order; zod takes the first, which on a primitive (without a catch) is the value itself', () => {
    for (const schema of [z.union([z.number(), z.string()]), z.union([z.string(), z.number()]), z.union([z.literal(1), z.number().int(), z.null()])]) {
      const check = compiled(schema);
      for (const value of [1, 'a', 1.5, null, true, -0]) expectAgreement(schema, check, value);
    }
    const withObject = z.union([z.string(), z.object({ a: z.number() })]);
    expect(compiled(withObject)({ a: 1, x_extra: 2 })).toBe(true);
    expectAgreement(withObject, compileCheck(withObject), { a: 1, x_extra: 2 });
  });

  it('objects: unknown keys kept in place, strict refuses them, loose keeps them; only plain objects', () => {
    const schema = z.object({ a: z.number() });
    const value = { x_extra: 'kept', a: 1 };
    const parsed = checkedParse(schema, value);
    expect(parsed.success && parsed.data).toBe(value);
    expect(schema.parse(value)).toEqual({ a: 1 });
    expect(compiled(z.strictObject({ a: z.number() }))(value)).toBe(false);
    expect(compiled(z.looseObject({ a: z.number() }))(value)).toBe(true);
    // zod reads keys through the prototype chain and copies them: left to zod.
    const inherited = Object.create({ a: 1 }) as unknown;
    expect(compiled(schema)(inherited)).toBe(false);
    expect(checkedParse(schema, inherited)).toEqual(schema.safeParse(inherited));
    for (const odd of [Object.assign(Object.create(null) as object, { a: 1 }), new Date(0), [1], JSON.parse('{"a": 1, "__proto__": 2}') as unknown]) expectAgreement(schema, compileCheck(schema), odd);
  });

  it('strings count code points as zod does, or leave the count to zod', () => {
    const schema = z.string().min(2).max(2);
    for (const value of ['ab', 'a', 'abc', '😀😀', '😀', '\uD800a', 'a\uDC00']) expectAgreement(schema, compileCheck(schema), value);
    // Two code points in four units: zod takes it, the check leaves it to zod.
    expect(compiled(schema)('😀😀')).toBe(false);
    expect(checkedParse(schema, '😀😀').success).toBe(true);
  });

  it('a global regex is tested from the start every time, as zod does', () => {
    const check = compiled(z.string().regex(/a/g));
    expect([check('a'), check('a'), check('b'), check('ba')]).toEqual([true, true, false, true]);
  });
});

describe('checkedParse', () => {
  it("a catch: the value itself when the inner type takes it, zod's fallback otherwise", () => {
    const schema = z.object({ window: z.object({ begin: z.number() }).nullable().optional().catch(undefined), n: z.number().catch(0).nullable().optional() });
    const check = compiled(schema);
    const value = { window: { begin: 1 }, n: null };
    expect(check(value)).toBe(true);
    expect(checkedParse(schema, value).data).toBe(value);
    expect(check({ n: 1 })).toBe(true);
    expect(check({ window: 'x', n: 1 })).toBe(false);
    expect(checkedParse(schema, { window: 'x', n: 'y' })).toEqual({ success: true, data: { window: undefined, n: 0 } });
    for (const odd of [{}, { window: undefined, n: 1 }, { window: null, n: undefined }, { n: 2 ** 53 }]) expectAgreement(schema, check, odd);
  });

  it('hands back the value itself, frozen or not; zod refuses as before, with its own issues', () => {
    const answer = { actor: { entitySearch: { count: 1, results: { nextCursor: null, entities: [{ guid: 'g' }] } } } };
    deepFreeze(answer);
    const parsed = checkedParse(SearchPage, answer);
    expect(parsed.success && parsed.data).toBe(answer);
    expect(parseAnswer(SearchPage, answer, 'ApplicationsSearch')).toBe(answer);
    const refused = { actor: { entitySearch: { count: 1.5, results: null } } };
    const fast = checkedParse(SearchPage, refused);
    expect(fast.success).toBe(false);
    expect(fast.error?.issues).toEqual(SearchPage.safeParse(refused).error?.issues);
    expect(() => parseAnswer(SearchPage, refused, 'ApplicationsSearch')).toThrow('unexpected ApplicationsSearch answer');
    expect(() => checkedParseOrThrow(SearchPage, refused)).toThrow(z.ZodError);
  });

  it("an uncompilable schema is zod's own: its transformed output", () => {
    const schema = z.object({ n: z.string().transform((text) => text.length), d: z.number().default(7) });
    expect(checkedParse(schema, { n: 'abc' })).toEqual({ success: true, data: { n: 3, d: 7 } });
    expect(checkedParseOrThrow(schema, { n: 'abcd', d: 1 })).toEqual({ n: 4, d: 1 });
    expect(checkedParse(schema, { n: 3 }).success).toBe(false);
  });
});

describe('the compiled check against zod, generated values', () => {
  for (const [name, schema] of Object.entries({ ...representative, ...real })) {
    it(`agrees with zod: ${name}`, () => {
      const check = compileCheck(schema);
      let passed = 0;
      fc.assert(
        fc.property(arbitraryOf(schema), (value) => {
          if (check?.(value) === true) passed++;
          expectAgreement(schema, check, value);
        }),
        { numRuns: 500 },
      );
      // The generated values reach the fast path, not only zod's refusals.
      if (check !== undefined) expect(passed).toBeGreaterThan(0);
    });
  }
});
