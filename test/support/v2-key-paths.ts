import type { V2KeyType } from '../../src/routes/mapping.ts';

/**
 * The check of a mapping's v2Keys (src/routes/mapping-base.ts V2KeyPaths) against one answer:
 * each path present with a type v2 could send, or null at its end.
 */
type KeyType = V2KeyType;

const TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d[+-]\d\d:\d\d$/;

function typeProblem(value: unknown, type: KeyType): string | undefined {
  if (value === null) return undefined;
  const ok = (() => {
    switch (type) {
      case 'int':
      case 'epoch-ms':
        return Number.isSafeInteger(value);
      case 'num':
        return typeof value === 'number' && Number.isFinite(value);
      case 'string':
        return typeof value === 'string';
      case 'bool':
        return typeof value === 'boolean';
      case 'time':
        return typeof value === 'string' && TIME.test(value);
      case 'int[]':
        return Array.isArray(value) && value.every((v) => Number.isSafeInteger(v));
      case 'string[]':
        return Array.isArray(value) && value.every((v) => typeof v === 'string');
      case 'object':
        return typeof value === 'object' && !Array.isArray(value);
    }
  })();
  return ok ? undefined : `is ${JSON.stringify(value)?.slice(0, 60)}, not ${type}`;
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** What one object lacks of a table: `path: problem`, and the optional segments it holds. */
export function keyPathProblems(item: unknown, paths: Readonly<Record<string, KeyType>>, skip: ReadonlySet<string> = new Set()): { problems: string[]; optionalSeen: Set<string> } {
  const problems: string[] = [];
  const optionalSeen = new Set<string>();
  for (const [path, type] of Object.entries(paths)) {
    if (skip.has(path)) continue;
    const segments = path.split('.');
    const walk = (value: unknown, index: number, where: string): void => {
      if (index === segments.length) {
        const problem = typeProblem(value, type);
        if (problem !== undefined) problems.push(`${where} ${problem}`);
        return;
      }
      const segment = segments[index] as string;
      const optional = segment.endsWith('?');
      const name = optional ? segment.slice(0, -1) : segment;
      const array = name.endsWith('[]');
      const key = array ? name.slice(0, -2) : name;
      const here = where === '' ? key : `${where}.${key}`;
      if (!isObject(value)) {
        problems.push(`${where} is ${JSON.stringify(value)?.slice(0, 60)}, not an object holding ${key}`);
        return;
      }
      if (!(key in value)) {
        if (!optional) problems.push(`${here} is absent`);
        return;
      }
      if (optional) optionalSeen.add(segments.slice(0, index + 1).join('.'));
      const child = value[key];
      if (!array) return walk(child, index + 1, here);
      if (!Array.isArray(child)) {
        problems.push(`${here} is not an array`);
        return;
      }
      child.forEach((element, n) => walk(element, index + 1, `${here}[${n}]`));
    };
    walk(item, 0, '');
  }
  return { problems: [...new Set(problems)], optionalSeen };
}
