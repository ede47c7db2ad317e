"""Small inline-SVG chart helpers for the HTML report (no JavaScript, no external files).

Every text that reaches the SVG (labels, titles, words from a corpus) is escaped here, so the
returned :class:`markupsafe.Markup` can be inserted into the page as is.  Coordinates are in
CSS pixels; charts scale with the page width through ``viewBox``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from markupsafe import Markup, escape

from genderscope.core.textfmt import fmt

PALETTE = ("#3366aa", "#cc5533", "#66aa55", "#9955aa", "#cc9922", "#44aaaa", "#888888", "#aa4466")
CATEGORY_COLOURS = {
    "male": "#3a6fb0",
    "female": "#c8553d",
    "neither": "#9a9a9a",
    "correct": "#4f9d55",
    "incorrect": "#c8553d",
    "unsure": "#e0b040",
    "other": "#9a9a9a",
}
FONT = 12


@dataclass
class Point:
    """One row of a point plot: ``value`` with an optional interval [lo, hi] (same units)."""

    label: str
    value: float | None
    lo: float | None = None
    hi: float | None = None
    series: str = ""
    note: str = ""


def _num(x: object) -> float | None:
    try:
        f = float(x)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None
    return f if math.isfinite(f) else None


def nice_ticks(lo: float, hi: float, n: int = 5) -> list[float]:
    """About ``n`` round tick values covering [lo, hi] (steps of 1, 2, 2.5 or 5 × 10^k)."""
    if hi < lo:
        lo, hi = hi, lo
    if hi == lo:
        hi = lo + 1.0
    raw = (hi - lo) / max(n, 1)
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw)
    start = math.floor(lo / step) * step
    ticks = []
    t = start
    while t <= hi + step * 1e-9:
        ticks.append(round(t, 12))
        t += step
    if ticks[-1] < hi:
        ticks.append(round(t, 12))
    return ticks


def _fmt_tick(t: float) -> str:
    if t == 0:
        return "0"
    if abs(t) >= 1000 or abs(t) < 0.01:
        return f"{t:.2g}"
    return f"{t:.3f}".rstrip("0").rstrip(".")


def _svg_open(width: float, height: float, title: str, kind: str) -> list[str]:
    head = (
        f'<svg xmlns="http://www.w3.org/2000/svg" class="chart" data-chart="{escape(kind)}" role="img" '
        f'viewBox="0 0 {width:.0f} {height:.0f}" width="{width:.0f}" height="{height:.0f}" '
        f'font-family="system-ui, sans-serif" font-size="{FONT}">'
    )
    return [head, f"<title>{escape(title)}</title>"]


def _text(x: float, y: float, s: object, anchor: str = "start", extra: str = "") -> str:
    return f'<text x="{x:.1f}" y="{y:.1f}" text-anchor="{anchor}"{extra}>{escape(str(s))}</text>'


#: average advance of one character at FONT px (system-ui), generous so that labels are never cut
CHAR_W = 7.2


def label_space(
    labels: Iterable[str], at_least: float, width: float, plot_min: float = 420
) -> tuple[float, float]:
    """(label column width, total width) such that the longest label fits whole and the plot area keeps
    at least ``plot_min`` px."""
    need = max((len(str(s)) for s in labels), default=0) * CHAR_W + 16
    lw = max(at_least, need)
    return lw, max(width, lw + plot_min)


def _axis(
    x0: float, x1: float, y_top: float, y_bot: float, ticks: Sequence[float], sx, label: str
) -> list[str]:
    out = [f'<line x1="{x0:.1f}" y1="{y_bot:.1f}" x2="{x1:.1f}" y2="{y_bot:.1f}" stroke="#444"/>']
    for t in ticks:
        x = sx(t)
        out.append(f'<line x1="{x:.1f}" y1="{y_top:.1f}" x2="{x:.1f}" y2="{y_bot:.1f}" stroke="#e3e3e3"/>')
        out.append(_text(x, y_bot + 14, _fmt_tick(t), "middle", ' fill="#444"'))
    if label:
        out.append(_text((x0 + x1) / 2, y_bot + 30, label, "middle", ' fill="#222"'))
    return out


def _legend(items: Iterable[tuple[str, str]], x: float, y: float) -> list[str]:
    out = []
    for name, colour in items:
        out.append(f'<rect x="{x:.1f}" y="{y - 9:.1f}" width="10" height="10" fill="{colour}"/>')
        out.append(_text(x + 14, y, name))
        x += 24 + 7 * len(name)
    return out


def _point_marks(p: Point, y: float, c: str, sx: Callable[[float], float], x0: float) -> list[str]:
    """One point's whisker (its interval, when it has one) and dot with its tooltip at height ``y``;
    "undefined" in place of a point without a value."""
    out = []
    plo, phi, pv = _num(p.lo), _num(p.hi), _num(p.value)
    if plo is not None and phi is not None:
        out.append(
            f'<line x1="{sx(plo):.1f}" y1="{y:.1f}" x2="{sx(phi):.1f}" y2="{y:.1f}" '
            f'stroke="{c}" stroke-width="2"/>'
        )
        for e in (plo, phi):
            out.append(
                f'<line x1="{sx(e):.1f}" y1="{y - 3:.1f}" x2="{sx(e):.1f}" y2="{y + 3:.1f}" '
                f'stroke="{c}" stroke-width="1.5"/>'
            )
    if pv is None:
        return out + [_text(x0 + 4, y + 4, "undefined", extra=' fill="#999" font-size="10"')]
    tip = (
        f"{p.label}{' ' + p.series if p.series else ''}: {fmt(pv)}"
        + (f" [{fmt(plo)}, {fmt(phi)}]" if plo is not None and phi is not None else "")
        + (f" {p.note}" if p.note else "")
    )
    out.append(
        f'<circle cx="{sx(pv):.1f}" cy="{y:.1f}" r="4" fill="{c}" class="pt">'
        f"<title>{escape(tip)}</title></circle>"
    )
    return out


def point_plot(
    points: Sequence[Point],
    *,
    title: str,
    xlabel: str = "",
    ref: float | None = None,
    ref_label: str = "",
    domain: tuple[float, float] | None = None,
    width: int = 720,
    label_width: int = 230,
) -> Markup:
    """Horizontal dot-and-whisker plot: one row per distinct label, one dot per series.

    ``ref`` draws a dashed vertical reference line (e.g. 0 or the baseline).
    """
    labels: list[str] = []
    series: list[str] = []
    for p in points:
        if p.label not in labels:
            labels.append(p.label)
        if p.series not in series:
            series.append(p.series)
    colours = {s: PALETTE[i % len(PALETTE)] for i, s in enumerate(series)}
    if len(series) == 1 and series[0] in CATEGORY_COLOURS:
        colours = {series[0]: CATEGORY_COLOURS[series[0]]}
    elif all(s in CATEGORY_COLOURS for s in series):
        colours = {s: CATEGORY_COLOURS[s] for s in series}
    vals = [v for p in points for v in (_num(p.value), _num(p.lo), _num(p.hi)) if v is not None]
    if ref is not None:
        vals.append(ref)
    lo, hi = domain if domain else ((min(vals), max(vals)) if vals else (0.0, 1.0))
    if not domain:
        pad = (hi - lo) * 0.05 or 0.5
        lo, hi = lo - pad, hi + pad
    ticks = nice_ticks(lo, hi)
    lo, hi = min(lo, ticks[0]), max(hi, ticks[-1])
    label_width, width = label_space(labels, label_width, width)
    row_h = 14 + 9 * len(series)
    legend_h = 20 if len([s for s in series if s]) > 0 else 0
    top = 24 + legend_h + (14 if ref is not None and ref_label else 0)
    height = top + row_h * len(labels) + 40
    x0, x1 = label_width, width - 20

    def sx(v: float) -> float:
        return x0 + (v - lo) / (hi - lo) * (x1 - x0)

    out = _svg_open(width, height, title, "point")
    out.append(_text(8, 16, title, extra=' font-weight="600"'))
    if legend_h:
        out += _legend([(s, colours[s]) for s in series if s], x0, 36)
    y_bot = top + row_h * len(labels)
    out += _axis(x0, x1, top, y_bot, ticks, sx, xlabel)
    if ref is not None and lo <= ref <= hi:
        out.append(
            f'<line x1="{sx(ref):.1f}" y1="{top:.1f}" x2="{sx(ref):.1f}" y2="{y_bot:.1f}" '
            f'stroke="#222" stroke-dasharray="4 3" class="ref-line"/>'
        )
        if ref_label:
            out.append(_text(sx(ref) + 3, top - 3, ref_label, extra=' fill="#222" font-size="11"'))
    for i, label in enumerate(labels):
        y_row = top + i * row_h
        if i % 2:
            out.append(
                f'<rect x="0" y="{y_row:.1f}" width="{x1:.1f}" height="{row_h}" fill="#f6f6f6" '
                f'fill-opacity="0.6"/>'
            )
        out.append(_text(x0 - 8, y_row + row_h / 2 + 4, label, "end", ' class="label"'))
        for j, s in enumerate(series):
            p = next((q for q in points if q.label == label and q.series == s), None)
            if p is None:
                continue
            y = y_row + 7 + 9 * j + (row_h - 14 - 9 * len(series)) / 2 + 4
            out += _point_marks(p, y, colours[s], sx, x0)
    out.append("</svg>")
    return Markup("\n".join(out))


def stacked_bars(
    rows: Sequence[tuple[str, dict[str, float | None]]],
    categories: Sequence[str],
    *,
    title: str,
    xlabel: str = "share",
    total: float = 1.0,
    width: int = 720,
    label_width: int = 230,
) -> Markup:
    """Horizontal stacked bars: for each row the shares of ``categories`` (they sum to ``total``)."""
    colours = {c: CATEGORY_COLOURS.get(c, PALETTE[i % len(PALETTE)]) for i, c in enumerate(categories)}
    label_width, width = label_space([r[0] for r in rows], label_width, width)
    row_h = 18
    top = 44
    height = top + row_h * len(rows) + 40
    x0, x1 = label_width, width - 20

    def sx(v: float) -> float:
        return x0 + v / total * (x1 - x0)

    out = _svg_open(width, height, title, "stacked")
    out.append(_text(8, 16, title, extra=' font-weight="600"'))
    out += _legend([(c, colours[c]) for c in categories], x0, 36)
    y_bot = top + row_h * len(rows)
    out += _axis(x0, x1, top, y_bot, nice_ticks(0, total), sx, xlabel)
    for i, (label, shares) in enumerate(rows):
        y = top + i * row_h
        out.append(_text(x0 - 8, y + row_h / 2 + 4, label, "end", ' class="label"'))
        acc = 0.0
        for c in categories:
            v = _num(shares.get(c))
            if not v:
                continue
            out.append(
                f'<rect x="{sx(acc):.1f}" y="{y + 2:.1f}" width="{max(sx(acc + v) - sx(acc), 0):.1f}" '
                f'height="{row_h - 4}" fill="{colours[c]}"><title>{escape(f"{label}: {c} {v:.3g}")}'
                f"</title></rect>"
            )
            acc += v
    out.append("</svg>")
    return Markup("\n".join(out))


def scatter_line(
    xs: Sequence[float],
    ys: Sequence[float],
    *,
    title: str,
    xlabel: str,
    ylabel: str,
    slope: float | None = None,
    intercept: float | None = None,
    labels: Sequence[str] | None = None,
    identity: bool = True,
    width: int = 560,
    height: int = 420,
    max_points: int = 1500,
) -> Markup:
    """Scatter plot with an optional fitted line y = slope·x + intercept and the y = x diagonal.

    More than ``max_points`` points are thinned to an evenly spaced subset (the fit is not redone).
    """
    pts = [
        (float(x), float(y), (labels[i] if labels else ""))
        for i, (x, y) in enumerate(zip(xs, ys))
        if _num(x) is not None and _num(y) is not None
    ]
    if len(pts) > max_points:
        step = len(pts) / max_points
        pts = [pts[int(i * step)] for i in range(max_points)]
    vx = [p[0] for p in pts] or [0.0, 1.0]
    vy = [p[1] for p in pts] or [0.0, 1.0]
    lo = min(min(vx), min(vy))
    hi = max(max(vx), max(vy))
    pad = (hi - lo) * 0.05 or 0.5
    ticks = nice_ticks(lo - pad, hi + pad)
    lo, hi = ticks[0], ticks[-1]
    x0, x1, y0, y1 = 60, width - 20, 30, height - 50

    def sx(v: float) -> float:
        return x0 + (v - lo) / (hi - lo) * (x1 - x0)

    def sy(v: float) -> float:
        return y1 - (v - lo) / (hi - lo) * (y1 - y0)

    out = _svg_open(width, height, title, "scatter")
    out.append(_text(8, 16, title, extra=' font-weight="600"'))
    out += _axis(x0, x1, y0, y1, ticks, sx, xlabel)
    out.append(f'<line x1="{x0}" y1="{y0}" x2="{x0}" y2="{y1}" stroke="#444"/>')
    for t in ticks:
        out.append(f'<line x1="{x0}" y1="{sy(t):.1f}" x2="{x1}" y2="{sy(t):.1f}" stroke="#eee"/>')
        out.append(_text(x0 - 5, sy(t) + 4, _fmt_tick(t), "end", ' fill="#444"'))
    out.append(_text(14, (y0 + y1) / 2, ylabel, "middle", f' transform="rotate(-90 14 {(y0 + y1) / 2:.1f})"'))
    if identity:
        out.append(
            f'<line x1="{sx(lo):.1f}" y1="{sy(lo):.1f}" x2="{sx(hi):.1f}" y2="{sy(hi):.1f}" '
            f'stroke="#999" stroke-dasharray="3 3"><title>y = x</title></line>'
        )
    radius = 3.5 if len(pts) < 200 else 2.2
    for x, y, lab in pts:
        tip = f"<title>{escape(f'{lab}: {x:.3g}, {y:.3g}')}</title>" if lab else ""
        out.append(
            f'<circle cx="{sx(x):.1f}" cy="{sy(y):.1f}" r="{radius}" fill="#3366aa" fill-opacity="0.5" '
            f'class="pt">{tip}</circle>'
        )
    if _num(slope) is not None and _num(intercept) is not None:
        a, b = float(slope), float(intercept)  # type: ignore[arg-type]
        xa, xb = lo, hi
        if a != 0:  # keep the fitted line inside the frame
            ends = sorted(((lo - b) / a, (hi - b) / a))
            xa, xb = max(lo, ends[0]), min(hi, ends[1])
        if xa < xb:
            out.append(
                f'<line x1="{sx(xa):.1f}" y1="{sy(a * xa + b):.1f}" x2="{sx(xb):.1f}" '
                f'y2="{sy(a * xb + b):.1f}" stroke="#cc5533" stroke-width="2" class="fit-line"/>'
            )
        out.append(_text(x0 + 6, y0 + 12, f"β = {a:.3f}, intercept = {b:.3f}", extra=' fill="#cc5533"'))
    out.append("</svg>")
    return Markup("\n".join(out))
