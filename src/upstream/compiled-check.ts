/**
 * A type check compiled from a zod schema, for validating NerdGraph answers without zod's copy:
 * on the applications list, zod cost about 6.7 times a hand-written check of the same rules
 * (docs/performance.md, "Validating upstream answers"). Generating the check from the schema
 * keeps the schema the only source of truth.
 *
 * The check is sound in one direction: `check(data) === true` means `schema.safeParse(data)`
 * succeeds and its output deep-equals `data` apart from object keys the schema does not name
 * (zod strips them; the check keeps them). A false says nothing: `checkedParse` then asks zod,
 * so refusals, dropped items and errors stay zod's own. Any schema node the compiler does not
 * know exactly (a transform, pipe, default, refinement, coercion, lazy, an unknown check kind...)
 * makes the whole schema uncompilable, and zod validates every answer of it. A catch compiles to
 * its inner check: its fallback value only ever replaces what the inner type refuses.
 *
 * Closures only: no eval or `new Function`, so it runs wherever the gateway runs.
 */
import type { z } from 'zod';
import {
  BOOLEAN,
  type CompiledCheck,
  NULL,
  NUMBER,
  type NodeView,
  SAFE_INTEGER,
  STRING,
  UNDEFINED,
  Uncompilable,
  all,
  arrayCheck,
  checksOf,
  isNumber,
  isString,
  noChecks,
  numberCheck,
  passesTypeBits,
  stringCheck,
  typed,
  uncompilable,
} from './compiled-check-rules.ts';

export type { CompiledCheck } from './compiled-check-rules.ts';

/** A compiled node. */
interface Compiled {
  readonly check: CompiledCheck;
  /** Whether it can accept only primitives (see compileUnion). */
  readonly primitiveOnly: boolean;
  /** Its plain type test as bits, when that is all it is; 0 otherwise. */
  readonly typeBits: number;
  /** null and undefined as its nullable and optional wrappers take them (NULL, UNDEFINED bits), and the check under them. */
  readonly wrapperTakes: number;
  readonly inner: CompiledCheck;
}

const compiledOf = (check: CompiledCheck, primitiveOnly: boolean): Compiled => ({ check, primitiveOnly, typeBits: 0, wrapperTakes: 0, inner: check });

function typeBitsOf(bits: number): Compiled {
  const check: CompiledCheck = (value) => passesTypeBits(bits, value);
  return { check, primitiveOnly: true, typeBits: bits, wrapperTakes: 0, inner: check };
}

/** `inner` that also takes null or undefined (NULL or UNDEFINED): .nullable(), .optional(). */
function alsoTaking(bit: number, inner: Compiled): Compiled {
  if (inner.typeBits !== 0) return typeBitsOf(inner.typeBits | bit);
  const takes = inner.wrapperTakes | bit;
  const under = inner.inner;
  const check: CompiledCheck =
    takes === UNDEFINED ? (value) => value === undefined || under(value) : takes === NULL ? (value) => value === null || under(value) : (value) => value === undefined || value === null || under(value);
  return { check, primitiveOnly: inner.primitiveOnly, typeBits: 0, wrapperTakes: takes, inner: under };
}

/**
 * A plain object, as JSON.parse makes (an array's prototype is not Object.prototype). zod takes
 * any non-array object, but reads keys through the prototype chain and copies what it finds as
 * own keys; with Object.prototype alone, whose names no compiled shape may hold, what zod reads
 * is what the object holds. Anything else is left to zod.
 */
const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && Object.getPrototypeOf(value) === Object.prototype;

function compileObject(node: NodeView, compiling: Set<NodeView>): Compiled {
  const def = node._zod.def;
  const shape = def.shape ?? uncompilable('an object without a shape');
  if (Object.getOwnPropertySymbols(shape).length > 0) uncompilable('a symbol key');
  const keys = Object.keys(shape);
  const count = keys.length;
  // Per field: its plain type bits (0 when it has more to it), what its wrappers take, the check
  // under them, and whether the key must be there.
  const typeBits = new Uint8Array(count);
  const wrapperTakes = new Uint8Array(count);
  const inners: CompiledCheck[] = [];
  const required = new Uint8Array(count);
  keys.forEach((key, i) => {
    // zod never writes __proto__, and reads Object.prototype's names through the chain.
    if (key in Object.prototype) uncompilable(`the key ${key}`);
    const field = shape[key] as NodeView;
    const compiled = compileNode(field, compiling);
    typeBits[i] = compiled.typeBits;
    wrapperTakes[i] = compiled.wrapperTakes;
    inners.push(compiled.inner);
    const { optin, optout } = field._zod;
    if (optin === undefined) required[i] = 1;
    // Absent is allowed and writes nothing: the output lacks the key, as the input does.
    else if (optin !== 'optional' || optout !== 'optional') uncompilable(`a field with optin ${optin} and optout ${optout}`);
  });
  // Unknown keys: stripped (no catchall), kept (unknown, any), refused (never); any other
  // catchall validates them, which only a check per key could follow.
  let extraKeys: 'ignored' | 'refused' = 'ignored';
  if (def.catchall !== undefined) {
    const catchall = def.catchall._zod;
    if (catchall.def.type === 'never' && checksOf(def.catchall).length === 0) extraKeys = 'refused';
    else if ((catchall.def.type === 'unknown' || catchall.def.type === 'any') && checksOf(def.catchall).length === 0) extraKeys = 'ignored';
    else uncompilable(`a catchall of ${catchall.def.type}`);
  }
  const known = new Set(keys);
  const objectChecks = checksOf(node);
  if (objectChecks.length > 0) uncompilable(`object check ${objectChecks[0]?.check}`);
  return compiledOf((value) => {
    if (!isPlainObject(value)) return false;
    for (let i = 0; i < count; i++) {
      const key = keys[i] as string;
      const field = value[key];
      if (field === undefined && !(key in value)) {
        if (required[i] === 1) return false;
        continue;
      }
      const bits = typeBits[i] as number;
      if (bits !== 0) {
        if (!passesTypeBits(bits, field)) return false;
        continue;
      }
      const takes = wrapperTakes[i] as number;
      if (field === null ? (takes & NULL) !== 0 : field === undefined && (takes & UNDEFINED) !== 0) continue;
      if (!(inners[i] as CompiledCheck)(field)) return false;
    }
    if (extraKeys === 'refused') for (const key in value) if (!known.has(key)) return false;
    return true;
  }, false);
}

function compileUnion(node: NodeView, compiling: Set<NodeView>): Compiled {
  const def = node._zod.def;
  // A discriminated union picks its option by the discriminator: not followed here.
  if (def.discriminator !== undefined) uncompilable('a discriminated union');
  // z.xor refuses a value two options take: any-option-passes is not its rule.
  if (def.inclusive === false) uncompilable('an exclusive union');
  if (checksOf(node).length > 0) uncompilable('a union with checks');
  // A catch always succeeds, so zod takes an option with one at its top whatever the value: an
  // option before it never decides, and the catch's value replaces the input.
  if ((def.options ?? []).some(catchesAtTop)) uncompilable('a union option with a catch');
  const options = (def.options ?? uncompilable('a union without options')).map((option) => compileNode(option, compiling));
  // zod keeps the first option that succeeds. On a primitive every option's output is the value
  // itself; an object or array could be taken by two options stripping different keys, so at
  // most one option may accept them, and it is the one zod takes.
  if (options.filter((option) => !option.primitiveOnly).length > 1) uncompilable('a union of two options that accept objects or arrays');
  const [first, second] = options;
  if (first !== undefined && second === undefined) return first;
  // Plain type tests: one test of their bits together.
  if (options.every((option) => option.typeBits !== 0)) return typeBitsOf(options.reduce((bits, option) => bits | option.typeBits, 0));
  const checks = options.map((option) => option.check);
  const primitiveOnly = options.every((option) => option.primitiveOnly);
  return compiledOf((value) => {
    for (let i = 0; i < checks.length; i++) if ((checks[i] as CompiledCheck)(value)) return true;
    return false;
  }, primitiveOnly);
}

/** A catch at the top of `node`, under optional and nullable wrappers (which pass the rest to it). */
function catchesAtTop(node: NodeView): boolean {
  let at: NodeView | undefined = node;
  while (at !== undefined && (at._zod.def.type === 'optional' || at._zod.def.type === 'nullable')) at = at._zod.def.innerType;
  return at?._zod.def.type === 'catch';
}

function compileNode(node: NodeView, compiling: Set<NodeView>): Compiled {
  // A schema that holds itself (through a getter in its shape) would never finish compiling.
  if (compiling.has(node)) return uncompilable('a recursive schema');
  compiling.add(node);
  try {
    return compileKind(node, compiling);
  } finally {
    compiling.delete(node);
  }
}

function compileKind(node: NodeView, compiling: Set<NodeView>): Compiled {
  const def = node._zod.def;
  switch (def.type) {
    case 'string': {
      if (def.coerce === true) return uncompilable('coercion');
      const checks = checksOf(node);
      return checks.length === 0 ? typeBitsOf(STRING) : compiledOf(typed(isString, checks.map(stringCheck)), true);
    }
    case 'number': {
      if (def.coerce === true) return uncompilable('coercion');
      const checks = checksOf(node);
      if (checks.length === 0) return typeBitsOf(NUMBER);
      // .int() alone, the common case, is a plain test too.
      const [only] = checks;
      if (checks.length === 1 && only?.check === 'number_format' && only.format === 'safeint' && only.when === undefined) return typeBitsOf(SAFE_INTEGER);
      return compiledOf(typed(isNumber, checks.map(numberCheck)), true);
    }
    case 'boolean':
      if (def.coerce === true) return uncompilable('coercion');
      noChecks(node);
      return typeBitsOf(BOOLEAN);
    case 'null':
      noChecks(node);
      return typeBitsOf(NULL);
    case 'unknown':
    case 'any':
      noChecks(node);
      return compiledOf(() => true, false);
    case 'literal':
    case 'enum': {
      noChecks(node);
      const values = node._zod.values ?? uncompilable(`${def.type} without values`);
      // Literals and enum members are primitives (zod refuses others), so the output is the value.
      return compiledOf((value) => values.has(value), true);
    }
    case 'optional': {
      noChecks(node);
      const innerType = def.innerType ?? uncompilable('optional without an inner type');
      // A defaulted inner type substitutes a value for undefined: a change of output.
      if (innerType._zod.optin === 'defaulted') return uncompilable('an optional default');
      const inner = compileNode(innerType, compiling);
      // exactOptional refuses undefined as a value (it only allows the key to be absent).
      if (node._zod.traits.has('$ZodExactOptional')) return inner;
      return alsoTaking(UNDEFINED, inner);
    }
    case 'nullable':
      noChecks(node);
      return alsoTaking(NULL, compileNode(def.innerType ?? uncompilable('nullable without an inner type'), compiling));
    case 'catch': {
      // zod passes the inner output on when the inner type succeeds, and only otherwise runs the
      // catch: the inner check is the check. (An absent key is the object's to judge, by optin.)
      noChecks(node);
      return compileNode(def.innerType ?? uncompilable('catch without an inner type'), compiling);
    }
    case 'array': {
      if (def.element === undefined) return uncompilable('an array without an element');
      const element = compileNode(def.element, compiling);
      const lengthOk = all(checksOf(node).map(arrayCheck) as CompiledCheck[]);
      const elementBits = element.typeBits;
      if (elementBits !== 0) {
        return compiledOf((value) => {
          if (!Array.isArray(value) || !lengthOk(value)) return false;
          for (let i = 0; i < value.length; i++) if (!passesTypeBits(elementBits, value[i])) return false;
          return true;
        }, false);
      }
      const check = element.check;
      return compiledOf((value) => {
        if (!Array.isArray(value) || !lengthOk(value)) return false;
        for (let i = 0; i < value.length; i++) if (!check(value[i])) return false;
        return true;
      }, false);
    }
    case 'object':
      return compileObject(node, compiling);
    case 'union':
      return compileUnion(node, compiling);
    default:
      // transform, pipe, default, prefault, lazy, custom, record, tuple, intersection...
      return uncompilable(`a ${def.type} schema`);
  }
}

/**
 * The check compiled from `schema`, or undefined when some node of it is not one this compiler
 * follows exactly (then zod must validate it). The reason is passed to `onUncompilable`.
 */
export function compileCheck(schema: z.ZodType, onUncompilable?: (why: string) => void): CompiledCheck | undefined {
  try {
    return compileNode(schema as unknown as NodeView, new Set()).check;
  } catch (error) {
    if (!(error instanceof Uncompilable)) throw error;
    onUncompilable?.(error.message);
    return undefined;
  }
}

/** Compiled once per schema object; null when it is uncompilable. */
const compiledChecks = new WeakMap<z.ZodType, CompiledCheck | null>();

function cachedCheck(schema: z.ZodType): CompiledCheck | null {
  let check = compiledChecks.get(schema);
  if (check === undefined) {
    try {
      check = compileCheck(schema) ?? null;
    } catch {
      // A def this compiler misreads (a zod upgrade) costs the fast path, never the answer.
      check = null;
    }
    compiledChecks.set(schema, check);
  }
  return check;
}

/**
 * `schema.safeParse(data)`, with the compiled check first: when it passes, the answer is `data`
 * itself (not a copy; it may be deep-frozen, and keeps keys the schema does not name). Otherwise
 * zod parses it, so every refusal is zod's, with zod's error.
 */
export function checkedParse<T>(schema: z.ZodType<T>, data: unknown): z.ZodSafeParseResult<T> {
  const check = cachedCheck(schema);
  // The check passed: zod would succeed with an output equal to data (less unknown keys).
  if (check !== null && check(data)) return { success: true, data: data as T };
  return schema.safeParse(data);
}

/** `schema.parse(data)` with the compiled check first: `data` itself when it passes, else zod's parse (and its throw). */
export function checkedParseOrThrow<T>(schema: z.ZodType<T>, data: unknown): T {
  const check = cachedCheck(schema);
  if (check !== null && check(data)) return data as T;
  return schema.parse(data);
}
