/**
 * `from` / `to` as real REST v2 clients send them (client-behaviour.md §4): RFC 3339 with `Z`
 * or an offset, a `+` that arrived as a space, fractions of a second, `YYYY-MM-DD HH:MM:SS`
 * without a zone (UTC), Ruby's `iso8601(0)`, and a bare date (midnight UTC, a choice; see
 * docs/metric-data-rules.md §2). Returns epoch ms truncated to whole seconds, or undefined.
 */
const TIMESTAMP =
  /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?(Z|[+-]\d{2}(?::?\d{2})?| \d{2}:?\d{2})?)?$/i;

const SECOND_MS = 1000;
/** 9999-12-31T23:59:59Z, the last instant a four-digit year can name. */
const LATEST_MS = 253_402_300_799_000;

function offsetMinutes(zone: string | undefined): number | undefined {
  if (zone === undefined || zone.toUpperCase() === 'Z') return 0;
  // A leading space is a `+` that the query-string decoder turned into a space.
  const sign = zone.startsWith('-') ? -1 : 1;
  const digits = zone.replace(/^[+\- ]/, '').replace(':', '');
  const hours = Number(digits.slice(0, 2));
  const minutes = digits.length > 2 ? Number(digits.slice(2)) : 0;
  if (hours > 23 || minutes > 59) return undefined;
  return sign * (hours * 60 + minutes);
}

export function parseV2Time(text: string): number | undefined {
  // Surrounding spaces only: a newline or tab is not part of any time a client sends.
  const match = TIMESTAMP.exec(text.replace(/^ +| +$/g, ''));
  if (!match) return undefined;
  const [, year, month, day, hour = '0', minute = '0', second = '0', , zone] = match;
  const fields = [year, month, day, hour, minute, second].map(Number) as [number, number, number, number, number, number];
  const [y, mo, d, h, mi, s] = fields;
  if (y < 1 || mo < 1 || mo > 12 || d < 1 || h > 23 || mi > 59 || s > 59) return undefined;
  const offset = offsetMinutes(zone);
  if (offset === undefined) return undefined;
  // setUTCFullYear, because Date.UTC maps years 0-99 to 1900-1999.
  const date = new Date(0);
  date.setUTCFullYear(y, mo - 1, d);
  date.setUTCHours(h, mi, s, 0);
  if (date.getUTCMonth() !== mo - 1 || date.getUTCDate() !== d) return undefined;
  const epochMs = date.getTime() - offset * 60 * SECOND_MS;
  // An offset can push year 9999 into year 10000, which ISO 8601 output cannot write.
  return epochMs > LATEST_MS ? undefined : epochMs;
}
