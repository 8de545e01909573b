import { isoSeconds } from '../../src/mapping-api.ts';

// What the summaries of applications, key transactions, mobile applications and hosts say alike.

/** alertSeverity -> v2 health_status; a non-reporting app is gray (rest-v2-shapes.md §1). */
const HEALTH: Record<string, string> = {
  CRITICAL: 'red',
  WARNING: 'orange',
  NOT_ALERTING: 'green',
  NOT_CONFIGURED: 'unknown',
};

export function healthStatus(reporting: boolean, alertSeverity: string | null | undefined): string {
  if (!reporting) return 'gray';
  return HEALTH[alertSeverity ?? ''] ?? 'unknown';
}

let minuteCache = { minute: Number.NaN, text: '' };

/** The current minute as a v2 timestamp, formatted once per minute rather than per item. */
export function startOfMinute(now: number): string {
  const minute = Math.floor(now / 60_000) * 60_000;
  if (minute !== minuteCache.minute) minuteCache = { minute, text: isoSeconds(minute) };
  return minuteCache.text;
}
