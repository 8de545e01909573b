import { z } from 'zod';

/**
 * What the compiled check (compiled-check.ts) reads of a zod 4 schema, and the checks it builds
 * for the leaves: plain type tests, number bounds and formats, lengths, patterns. A rule it does
 * not know exactly throws Uncompilable, and the schema is left to zod.
 */

/** A check built from a schema: true means zod would take the value unchanged (bar unknown keys). */
export type CompiledCheck = (data: unknown) => boolean;

// A narrow, typed view of the parts of zod 4's internals (`schema._zod`) read here. zod's own
// internal types are generic over every schema kind; these say only what the compiler relies on.

export interface CheckDefView {
  /** The check's kind: "number_format", "greater_than", "min_length", "string_format"... */
  readonly check: string;
  readonly when?: unknown;
  readonly value?: unknown;
  readonly inclusive?: boolean;
  readonly format?: string;
  readonly minimum?: number;
  readonly maximum?: number;
  readonly length?: number;
  readonly pattern?: unknown;
}

export interface CheckView {
  readonly _zod: { readonly def: CheckDefView };
}

export interface NodeDefView {
  readonly type: string;
  readonly coerce?: boolean;
  readonly checks?: readonly CheckView[];
  /** Set when the schema is itself a check (z.int(), z.url()): its kind, as on a check's def. */
  readonly check?: string;
  readonly innerType?: NodeView;
  readonly element?: NodeView;
  readonly shape?: Readonly<Record<string, NodeView>>;
  readonly catchall?: NodeView;
  readonly options?: readonly NodeView[];
  readonly discriminator?: unknown;
  /** false on an exclusive union (z.xor, a discriminated union): exactly one option may match. */
  readonly inclusive?: boolean;
}

export interface NodeView {
  readonly _zod: {
    readonly def: NodeDefView;
    readonly traits: ReadonlySet<string>;
    /** How an object treats the key when absent ("optional": allowed, nothing written). */
    readonly optin?: string;
    readonly optout?: string;
    /** The accepted values of a literal or enum, as zod's own parse tests them. */
    readonly values?: ReadonlySet<unknown>;
  };
}

// A plain type test as bits (a string, a null, ...), for nodes that are nothing more: the object
// and array loops test these inline rather than call a closure per value, most of the cost.
export const STRING = 1;
export const NUMBER = 2;
export const SAFE_INTEGER = 4;
export const BOOLEAN = 8;
export const NULL = 16;
export const UNDEFINED = 32;

/** Whether `value` passes the plain type test `bits` (NUMBER: finite, as z.number(); SAFE_INTEGER: as .int()). */
export function passesTypeBits(bits: number, value: unknown): boolean {
  switch (typeof value) {
    case 'string':
      return (bits & STRING) !== 0;
    case 'number':
      return (bits & NUMBER) !== 0 ? Number.isFinite(value) : (bits & SAFE_INTEGER) !== 0 && Number.isSafeInteger(value);
    case 'boolean':
      return (bits & BOOLEAN) !== 0;
    case 'undefined':
      return (bits & UNDEFINED) !== 0;
    case 'object':
      return value === null && (bits & NULL) !== 0;
    default:
      return false;
  }
}

/** Why a schema cannot be compiled: thrown inside the compiler, caught by compileCheck. */
export class Uncompilable extends Error {}

export const uncompilable = (why: string): never => {
  throw new Uncompilable(why);
};

// The default `when` of zod's length checks (run on anything with a length). A check with
// another `when` may be skipped on values this compiler would test, so only this one is known.
const DEFAULT_LENGTH_WHEN: unknown = (z.string().min(1) as unknown as NodeView)._zod.def.checks?.[0]?._zod.def.when;

/** zod's number formats: [least, greatest] and whether the value must be an integer. */
const NUMBER_FORMATS: Readonly<Record<string, readonly [number, number, boolean]>> = {
  safeint: [Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER, true],
  int32: [-2147483648, 2147483647, true],
  uint32: [0, 4294967295, true],
  float32: [-3.4028234663852886e38, 3.4028234663852886e38, false],
  float64: [-Number.MAX_VALUE, Number.MAX_VALUE, false],
};

const HIGH_SURROGATE = /[\uD800-\uDBFF]/;

/** The checks a node runs after its type test: its def's, and itself when it is a check (z.int()). */
export function checksOf(node: NodeView): readonly CheckDefView[] {
  const own = node._zod.traits.has('$ZodCheck') ? [node._zod.def as unknown as CheckDefView] : [];
  return [...own, ...(node._zod.def.checks ?? []).map((check) => check._zod.def)];
}

export const all = (checks: readonly CompiledCheck[]): CompiledCheck => {
  if (checks.length === 0) return () => true;
  if (checks.length === 1) return checks[0] as CompiledCheck;
  return (value) => {
    for (let i = 0; i < checks.length; i++) if (!(checks[i] as CompiledCheck)(value)) return false;
    return true;
  };
};

export function numberCheck(def: CheckDefView): (n: number) => boolean {
  if (def.when !== undefined) return uncompilable(`a number check with its own "when"`);
  switch (def.check) {
    case 'number_format': {
      const range = NUMBER_FORMATS[def.format ?? 'float64'];
      if (range === undefined) return uncompilable(`number format ${def.format}`);
      const [least, greatest, integer] = range;
      // zod: an integer format refuses a non-integer, then a non-safe integer, then the range.
      return integer ? (n) => Number.isSafeInteger(n) && n >= least && n <= greatest : (n) => n >= least && n <= greatest;
    }
    case 'greater_than': {
      const bound = def.value;
      if (typeof bound !== 'number') return uncompilable('a non-number bound');
      return def.inclusive === true ? (n) => n >= bound : (n) => n > bound;
    }
    case 'less_than': {
      const bound = def.value;
      if (typeof bound !== 'number') return uncompilable('a non-number bound');
      return def.inclusive === true ? (n) => n <= bound : (n) => n < bound;
    }
    default:
      return uncompilable(`number check ${def.check}`);
  }
}

function lengthWhen(def: CheckDefView): void {
  if (def.when !== DEFAULT_LENGTH_WHEN) uncompilable(`a length check with its own "when"`);
}

/**
 * zod counts a string's length in code points. Without a high surrogate, code points are UTF-16
 * units; with one, the check answers false and zod decides (only ever a false that zod settles).
 */
export function stringCheck(def: CheckDefView): (s: string) => boolean {
  switch (def.check) {
    case 'max_length': {
      lengthWhen(def);
      const max = def.maximum ?? uncompilable('max_length without a maximum');
      // At most max units is at most max code points.
      return (s) => s.length <= max;
    }
    case 'min_length': {
      lengthWhen(def);
      const min = def.minimum ?? uncompilable('min_length without a minimum');
      // At least 2·min units is at least min code points, whatever the pairs.
      return (s) => s.length >= 2 * min || (s.length >= min && !HIGH_SURROGATE.test(s));
    }
    case 'length_equals': {
      lengthWhen(def);
      const length = def.length ?? uncompilable('length_equals without a length');
      return (s) => s.length === length && !HIGH_SURROGATE.test(s);
    }
    case 'string_format': {
      // Only .regex(): other formats (email, url, lowercase...) have their own rules.
      if (def.format !== 'regex' || !(def.pattern instanceof RegExp) || def.when !== undefined) return uncompilable(`string format ${def.format}`);
      const pattern = def.pattern;
      return (s) => {
        // As zod does: a global or sticky pattern would otherwise resume where it last stopped.
        pattern.lastIndex = 0;
        return pattern.test(s);
      };
    }
    default:
      return uncompilable(`string check ${def.check}`);
  }
}

export function arrayCheck(def: CheckDefView): (items: readonly unknown[]) => boolean {
  lengthWhen(def);
  switch (def.check) {
    case 'max_length': {
      const max = def.maximum ?? uncompilable('max_length without a maximum');
      return (items) => items.length <= max;
    }
    case 'min_length': {
      const min = def.minimum ?? uncompilable('min_length without a minimum');
      return (items) => items.length >= min;
    }
    case 'length_equals': {
      const length = def.length ?? uncompilable('length_equals without a length');
      return (items) => items.length === length;
    }
    default:
      return uncompilable(`array check ${def.check}`);
  }
}

export function typed<T>(test: (value: unknown) => value is T, checks: readonly ((value: T) => boolean)[]): CompiledCheck {
  if (checks.length === 0) return test;
  return (value) => {
    if (!test(value)) return false;
    for (let i = 0; i < checks.length; i++) if (!(checks[i] as (value: T) => boolean)(value)) return false;
    return true;
  };
}

export const isString = (value: unknown): value is string => typeof value === 'string';
// zod's z.number(): a number, neither NaN nor infinite.
export const isNumber = (value: unknown): value is number => typeof value === 'number' && Number.isFinite(value);

export function noChecks(node: NodeView): void {
  const checks = checksOf(node);
  if (checks.length > 0) uncompilable(`${node._zod.def.type} check ${checks[0]?.check}`);
}
