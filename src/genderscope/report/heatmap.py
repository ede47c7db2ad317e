"""An inline-SVG heatmap (rows × columns of shares), e.g. answer types per adjective pair.

Cells are shaded from white (0) to the column group's colour (``total``), and print their value; text is
escaped here, like every chart of :mod:`genderscope.report.svg`.
"""

from __future__ import annotations

from collections.abc import Sequence

from markupsafe import Markup, escape

from genderscope.report.svg import CATEGORY_COLOURS, FONT, _legend, _svg_open, _text, label_space


def _mix(colour: str, share: float) -> str:
    """``colour`` (#rrggbb) blended with white: share 0 = white, 1 = the colour."""
    share = min(max(share, 0.0), 1.0)
    rgb = [int(colour[i : i + 2], 16) for i in (1, 3, 5)]
    return "#" + "".join(f"{round(255 - (255 - c) * share):02x}" for c in rgb)


def heatmap(
    rows: Sequence[str],
    groups: Sequence[str],
    categories: Sequence[str],
    values: dict[tuple[str, str, str], float | None],
    *,
    title: str,
    total: float = 100.0,
    unit: str = "%",
    width: int = 720,
) -> Markup:
    """One row per ``rows`` entry, one column per (group, category); ``values[(row, group, category)]``.

    Groups (e.g. pro / anti) are drawn side by side with a gap; a missing value is a grey cell with "–".
    """
    label_width, width = label_space(rows, 180, width, plot_min=60 * len(groups) * len(categories) + 30)
    cell_w = (width - label_width - 20 - 12 * (len(groups) - 1)) / max(len(groups) * len(categories), 1)
    cell_h = 20
    top = 64
    height = top + cell_h * len(rows) + 14
    out = _svg_open(width, height, title, "heatmap")
    out.append(_text(8, 16, title, extra=' font-weight="600"'))
    out += _legend([(c, CATEGORY_COLOURS.get(c, "#888888")) for c in categories], label_width, 34)
    for g, group in enumerate(groups):
        gx = label_width + g * (len(categories) * cell_w + 12)
        out.append(_text(gx + len(categories) * cell_w / 2, 52, group, "middle", ' font-weight="600"'))
        for c, cat in enumerate(categories):
            out.append(_text(gx + (c + 0.5) * cell_w, top - 2, cat, "middle", ' font-size="10" fill="#444"'))
    for r, row in enumerate(rows):
        y = top + r * cell_h
        out.append(_text(label_width - 8, y + cell_h / 2 + 4, row, "end", ' class="label"'))
        for g, group in enumerate(groups):
            gx = label_width + g * (len(categories) * cell_w + 12)
            for c, cat in enumerate(categories):
                v = values.get((row, group, cat))
                x = gx + c * cell_w
                fill = "#eeeeee" if v is None else _mix(CATEGORY_COLOURS.get(cat, "#888888"), v / total)
                tip = f"{row} · {group} · {cat}: " + ("–" if v is None else f"{v:.3g} {unit}")
                out.append(
                    f'<rect x="{x:.1f}" y="{y + 1:.1f}" width="{cell_w - 2:.1f}" height="{cell_h - 2}" '
                    f'fill="{fill}"><title>{escape(tip)}</title></rect>'
                )
                text = "–" if v is None else f"{v:.0f}"
                dark = v is not None and v / total > 0.6
                out.append(
                    _text(
                        x + cell_w / 2 - 1,
                        y + cell_h / 2 + 4,
                        text,
                        "middle",
                        f' font-size="{FONT - 1}" fill="{"#fff" if dark else "#222"}"',
                    )
                )
    out.append("</svg>")
    return Markup("\n".join(out))
