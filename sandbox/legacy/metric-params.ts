/**
 * The legacy metric data route's parameters and time buckets (metrics.ts), by
 * docs/metric-data-rules.md: names, values, from/to (v2's timestamp grammar, parseTime;
 * client-behaviour.md §4), period and flags (rules §1, §2), and the range, default granularity
 * and buckets (rules §3), worked out here on their own, as the rest of the legacy face.
 */
import { MetricTitles } from './titles.ts';
import { V2Error } from './wire.ts';
import type { DataOptions, MetricRequest } from './metric-request.ts';
import { REQUEST_RULE_TITLES } from '../../facts/rule-titles.ts';
const MAX_NAMES = 100;
const MAX_TIMESLICES = 366;
export const MINUTE = 60;
export const HOUR = 3600;
export const DAY = 86_400;
/** Starts older than this get ten-point answers (the data there is hourly rollups). */
const OLD_START_SECONDS = 8 * DAY;

const invalid = (title: string): V2Error => new V2Error(422, title);
const floorTo = (value: number, step: number): number => Math.floor(value / step) * step;
const ceilTo = (value: number, step: number): number => Math.ceil(value / step) * step;

// ---------------------------------------------------------------------------------------------
// metrics/data.json: parameters (rules §1, §2)

export interface DataParams {
  names: string[];
  /** undefined: every value of each metric. */
  values: string[] | undefined;
  /** Epoch seconds. */
  from: number;
  to: number;
  /** Seconds; 0 means the default granularity. */
  period: number;
  summarize: boolean;
}

/** Order kept, duplicates (first kept) and empty values dropped. */
const distinct = (list: string[]): string[] => [...new Set(list.filter((value) => value !== ''))];

export function dataParams(req: MetricRequest, options: DataOptions): DataParams {
  const names = distinct([...req.param('names'), ...(options.nameAlias ? req.param('name') : [])]);
  if (names.length === 0) throw invalid(MetricTitles.namesRequired);
  if (names.length > MAX_NAMES) throw invalid(MetricTitles.tooManyNames);
  const values = distinct(req.param('values'));
  const from = timeParam(req, 'from');
  const to = timeParam(req, 'to') ?? Math.floor(req.now / 1000);
  const period = periodParam(req);
  const summarize = flagParam(req, 'summarize');
  flagParam(req, 'raw'); // validated only: output is never rounded
  const start = from ?? to - 30 * MINUTE;
  if (start < 0) throw invalid(MetricTitles.timeBeforeEpoch('from'));
  return { names, values: values.length > 0 ? values : undefined, from: start, to, period, summarize };
}

function lastValue(req: MetricRequest, key: string): string | undefined {
  return req.param(key).at(-1);
}

function timeParam(req: MetricRequest, key: 'from' | 'to'): number | undefined {
  const text = lastValue(req, key);
  if (text === undefined || text === '') return undefined;
  const seconds = parseTime(text);
  if (seconds === undefined) throw invalid(MetricTitles.badTime(key));
  if (seconds < 0) throw invalid(MetricTitles.timeBeforeEpoch(key));
  return seconds;
}

function periodParam(req: MetricRequest): number {
  const text = lastValue(req, 'period')?.trim();
  if (text === undefined || text === '') return 0;
  // Twelve digits cover any range of years 0001-9999 many times over and keep times printable.
  if (!/^\d{1,12}$/.test(text) || Number(text) % MINUTE !== 0) throw invalid(MetricTitles.periodNotMinutes);
  return Number(text);
}

const TRUE_WORDS = ['true', '1', 'yes', 'on', 't'];
const FALSE_WORDS = ['false', '0', 'no', 'off', 'f', ''];

function flagParam(req: MetricRequest, key: 'summarize' | 'raw'): boolean {
  const text = lastValue(req, key)?.trim().toLowerCase();
  if (text === undefined || FALSE_WORDS.includes(text)) return false;
  if (TRUE_WORDS.includes(text)) return true;
  throw invalid(REQUEST_RULE_TITLES.boolean(key));
}

/**
 * `YYYY-MM-DD[T| ]HH:MM[:SS[.fraction]][zone]` or a bare date, zone `Z`, `±HH:MM`, `±HHMM`,
 * `±HH`, or ` HH:MM`/` HHMM` (a `+` that arrived as a space).
 */
const TIME =
  /^(?<year>\d{4})-(?<month>\d{2})-(?<day>\d{2})(?:[T ](?<hour>\d{2}):(?<minute>\d{2})(?::(?<second>\d{2})(?:\.\d+)?)?(?<zone>Z|[+-]\d{2}(?::?\d{2})?| \d{2}:?\d{2})?)?$/i;

const isLeap = (year: number): boolean => (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
export const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/** Epoch seconds of a v2 timestamp (fraction truncated), or undefined when it is not one. */
export function parseTime(text: string): number | undefined {
  const groups = TIME.exec(text)?.groups;
  if (!groups) return undefined;
  const field = (name: string): number => Number(groups[name] ?? 0);
  const [year, month, day, hour, minute, second] = ['year', 'month', 'day', 'hour', 'minute', 'second'].map(field) as [number, number, number, number, number, number];
  const monthDays = (DAYS_IN_MONTH[month - 1] ?? 0) + (month === 2 && isLeap(year) ? 1 : 0);
  if (year < 1 || day < 1 || day > monthDays || hour > 23 || minute > 59 || second > 59) return undefined;
  const offset = zoneOffsetSeconds(groups.zone);
  if (offset === undefined) return undefined;
  // setUTCFullYear, unlike Date.UTC, does not read years 0-99 as 1900-1999.
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  date.setUTCHours(hour, minute, second, 0);
  const seconds = date.getTime() / 1000 - offset;
  // Past 9999-12-31T23:59:59Z no four-digit year can write it back.
  return seconds > 253_402_300_799 ? undefined : seconds;
}

function zoneOffsetSeconds(zone: string | undefined): number | undefined {
  if (zone === undefined || zone.toUpperCase() === 'Z') return 0;
  const digits = zone.slice(1).replace(':', '');
  const hours = Number(digits.slice(0, 2));
  const minutes = Number(digits.slice(2) || '0');
  if (hours > 23 || minutes > 59) return undefined;
  return (zone.startsWith('-') ? -1 : 1) * (hours * HOUR + minutes * MINUTE);
}

// ---------------------------------------------------------------------------------------------
// Range, granularity, buckets (rules §3)

/** `count` buckets of `width` seconds from `start` (epoch seconds). */
export interface Buckets {
  start: number;
  width: number;
  count: number;
  /** One summarized timeslice, whose `to` is v2's inclusive `…:59`. */
  summarized: boolean;
}

/** Default granularity by range length: [longest length, seconds]. */
const GRANULARITY: ReadonlyArray<readonly [number, number]> = [
  [3 * HOUR, 60],
  [6 * HOUR, 120],
  [14 * HOUR, 300],
  [24 * HOUR, 600],
  [4 * DAY, 1800],
  [7 * DAY, 3600],
  [21 * DAY, 10_800],
  [42 * DAY, 21_600],
  [63 * DAY, 43_200],
];
const LONGEST_GRANULARITY = 259_200;

function defaultGranularity(length: number): number {
  return GRANULARITY.find(([limit]) => length <= limit)?.[1] ?? LONGEST_GRANULARITY;
}

export function bucketsFor(params: DataParams, now: number): Buckets {
  const { from, to, period, summarize } = params;
  const length = to - from;
  if (length < MINUTE) throw invalid(MetricTitles.timeRangeTooShort);
  const tenPoint = from * 1000 < now - OLD_START_SECONDS * 1000 && length <= 4 * DAY;
  const tenStart = floorTo(from, HOUR);
  const minimum = tenPoint ? (ceilTo(to, HOUR) - tenStart) / 10 : defaultGranularity(length);
  if (period !== 0 && period < minimum) throw invalid(MetricTitles.periodTooSmall(minimum));
  if (summarize) {
    const start = floorTo(from, MINUTE);
    return { start, width: floorTo(to, MINUTE) - start, count: 1, summarized: true };
  }
  if (tenPoint && period === 0) return { start: tenStart, width: minimum, count: 10, summarized: false };
  const width = period || minimum;
  const start = floorTo(from, width);
  // The bucket holding `to` is left out unless it is the only one.
  const end = Math.max(floorTo(to, width), start + width);
  const count = (end - start) / width;
  if (count > MAX_TIMESLICES) throw invalid(MetricTitles.tooManyTimeslices);
  return { start, width, count, summarized: false };
}
