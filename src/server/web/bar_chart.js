// Bar charts drawn as SVG, element by element (no HTML strings): stacked
// bars over days for the usage page, and one small bar per turn for a
// session. Colours come from the stylesheet (.series-N), so dark mode and
// light mode each get theirs.

const kSvg = 'http://www.w3.org/2000/svg';
export const kSeriesColours = 8;  // .series-0 ... .series-7; the last is "other"

function svgElement(tag, attributes = {}) {
  const node = document.createElementNS(kSvg, tag);
  for (const [name, value] of Object.entries(attributes)) node.setAttribute(name, String(value));
  return node;
}

function titled(node, text) {
  const title = svgElement('title');
  title.textContent = text;
  node.append(title);
  return node;
}

// `columns`: labels along the bottom (days); `series`: [{name, values}] with
// one value per column, drawn bottom to top in order; `format(v)` writes a
// value. Returns an <svg> that scales to its box's width.
// `fit` is the width in CSS pixels it will be shown at, so that its words
// keep their size on a phone and on a desktop alike.
export function stackedBars(columns, series, format, {height = 180, label = 'chart', fit = 640} = {}) {
  const width = Math.max(columns.length * 4, Math.min(fit, 880), 200);
  const top = 14;
  const bottom = 18;
  const plot = height - top - bottom;
  const totals = columns.map((_, i) => series.reduce((sum, s) => sum + (s.values[i] || 0), 0));
  const highest = Math.max(...totals, 0);
  const svg = svgElement('svg', {viewBox: `0 0 ${width} ${height}`, class: 'chart', role: 'img'});
  svg.setAttribute('aria-label', label);
  svg.append(svgElement('line', {x1: 0, x2: width, y1: top + plot, y2: top + plot, class: 'axis'}));
  const step = width / Math.max(columns.length, 1);
  const barWidth = Math.max(step * 0.7, 1);
  columns.forEach((column, i) => {
    let y = top + plot;
    const x = i * step + (step - barWidth) / 2;
    series.forEach((s, k) => {
      const v = s.values[i] || 0;
      if (v <= 0 || highest <= 0) return;
      const h = Math.max((v / highest) * plot, 0.5);
      y -= h;
      svg.append(titled(svgElement('rect', {x, y, width: barWidth, height: h,
                                            class: `bar series-${s.colour ?? k}`}),
                        `${column} · ${s.name}: ${format(v)}`));
    });
  });
  if (highest > 0) {
    const peak = svgElement('text', {x: 2, y: top - 3, class: 'chart-label'});
    peak.textContent = `max ${format(highest)}`;
    svg.append(peak);
  }
  if (columns.length) {
    for (const [i, anchor] of [[0, 'start'], [columns.length - 1, 'end']]) {
      const text = svgElement('text', {x: anchor === 'start' ? 2 : width - 2, y: height - 4,
                                       'text-anchor': anchor, class: 'chart-label'});
      text.textContent = columns[i];
      svg.append(text);
    }
  }
  return svg;
}
