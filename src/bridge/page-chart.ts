import { SERIES_OUTCOMES, type ParitySeries, type SeriesBucket } from '../compare/parity-store.ts';
import { attr, e } from './page-html.ts';

/**
 * The /bridge/ page's trend: comparisons per hour as stacked bars, each bar the hour's share of
 * matches, mismatches and noise (so a shrinking red part is things getting better, whatever the
 * traffic), its counts in the bar's title. Inline SVG, no script and no charting library: the
 * page's CSP allows neither, and a few rectangles do not need one. Hours without comparisons
 * between the first and the last are left empty.
 */
const WIDTH = 960;
const HEIGHT = 220;
const PLOT = { left: 44, right: 8, top: 10, bottom: 28 };
const LABELS: Record<(typeof SERIES_OUTCOMES)[number], string> = { match: 'match', mismatch: 'mismatch', noise: 'noise only' };

const hourText = (start: number): string => `${new Date(start).toISOString().slice(0, 13).replace('T', ' ')}:00 UTC`;

function bar(bucket: SeriesBucket, x: number, width: number, plotHeight: number): string {
  const total = bucket.match + bucket.mismatch + bucket.noise;
  let y = PLOT.top + plotHeight;
  const parts = SERIES_OUTCOMES.map((outcome) => {
    const height = (bucket[outcome] / total) * plotHeight;
    y -= height;
    return `<rect class="s-${outcome}"${attr('x', x.toFixed(1))}${attr('y', y.toFixed(1))}${attr('width', width.toFixed(1))}${attr('height', height.toFixed(1))}${attr('data-outcome', outcome)}${attr('data-count', bucket[outcome])}/>`;
  }).join('');
  const title = `${hourText(bucket.start)}: ${bucket.match} match, ${bucket.mismatch} mismatch, ${bucket.noise} noise only`;
  return `<g class="bucket"${attr('data-bucket', new Date(bucket.start).toISOString())}${attr('data-total', total)}><title>${e(title)}</title>${parts}</g>`;
}

export function trendChart(series: ParitySeries): string {
  const buckets = series.buckets.filter((b) => b.match + b.mismatch + b.noise > 0);
  const first = buckets[0];
  const last = buckets[buckets.length - 1];
  if (first === undefined || last === undefined) return '<p class="empty">No comparison yet: the chart starts with the first one.</p>';
  const hours = Math.round((last.start - first.start) / series.bucketMs) + 1;
  const plotWidth = WIDTH - PLOT.left - PLOT.right;
  const plotHeight = HEIGHT - PLOT.top - PLOT.bottom;
  const slot = plotWidth / hours;
  const barWidth = Math.max(1, Math.min(slot * 0.8, 48));
  const bars = buckets.map((b) => bar(b, PLOT.left + ((b.start - first.start) / series.bucketMs) * slot + (slot - barWidth) / 2, barWidth, plotHeight)).join('');
  const yTicks = [0, 50, 100]
    .map((pct) => {
      const y = PLOT.top + plotHeight - (pct / 100) * plotHeight;
      return `<line class="axis"${attr('x1', PLOT.left)}${attr('x2', WIDTH - PLOT.right)}${attr('y1', y)}${attr('y2', y)}/><text${attr('x', PLOT.left - 6)}${attr('y', y + 4)} text-anchor="end">${pct} %</text>`;
    })
    .join('');
  const bottom = HEIGHT - 8;
  const xLabels =
    `<text${attr('x', PLOT.left)}${attr('y', bottom)}>${e(hourText(first.start))}</text>` +
    (hours > 1 ? `<text${attr('x', WIDTH - PLOT.right)}${attr('y', bottom)} text-anchor="end">${e(hourText(last.start))}</text>` : '');
  const totals = SERIES_OUTCOMES.map((o) => buckets.reduce((n, b) => n + b[o], 0));
  const description = `${buckets.length} hour${buckets.length === 1 ? '' : 's'} with comparisons from ${hourText(first.start)} to ${hourText(last.start)}: ${totals[0]} match, ${totals[1]} mismatch, ${totals[2]} noise only.`;
  return (
    `<svg id="trend-chart"${attr('viewBox', `0 0 ${WIDTH} ${HEIGHT}`)} role="img" aria-labelledby="trend-title trend-desc" xmlns="http://www.w3.org/2000/svg">` +
    `<title id="trend-title">Share of comparisons per hour that matched, mismatched or differed by noise only</title><desc id="trend-desc">${e(description)}</desc>` +
    `${yTicks}${bars}${xLabels}</svg>` +
    `<ul class="legend">${SERIES_OUTCOMES.map((o) => `<li><i class="k-${o}"></i>${e(LABELS[o])}</li>`).join('')}</ul>`
  );
}

export function trendSection(series: ParitySeries): string {
  const kept = `${series.maxBuckets / 24} days`;
  return (
    '<section id="trend"><h2>Comparisons per hour</h2>' +
    `<p class="muted">Each bar is one hour (UTC) of compare and candidate comparisons: the share that matched, mismatched, or differed only where the legacy API moves by itself (noise). Hover a bar for its counts. The last ${kept} are kept.</p>` +
    `${trendChart(series)}</section>`
  );
}
