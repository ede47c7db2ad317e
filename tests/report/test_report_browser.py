"""End to end in headless Chromium (Debian's /usr/bin/chromium driven by Playwright): the report opens
from a file:// URL with no network request and no console error, every figure is drawn, and malicious
model answers are shown as text (no dialog, no element created from them).  At 1400 px, a demo-like
report's first screen shows the summary, the page (details closed) is under 15 screens and no label
is clipped; at 1280 and 1920 px no two text boxes of the summary of 12 models × 31 tests overlap.
Screenshots are written to the test's tmp folder (path printed)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from report_runs import MALICIOUS, demo_like_runs, fixture_run, gest_run, many_model_runs, poison_attempts

CHROMIUM = Path("/usr/bin/chromium")
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]

pytestmark = pytest.mark.integration


def _browser_or_skip():
    if not CHROMIUM.exists():
        pytest.skip("browser test skipped: /usr/bin/chromium is missing (apt-get install chromium)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.skip("browser test skipped: the playwright package is missing (pip install playwright)")
    return sync_playwright


def test_report_in_headless_chromium(tmp_path: Path) -> None:
    sync_playwright = _browser_or_skip()
    from genderscope.report.html import write_report

    gest = gest_run(tmp_path / "gest", limit=20)
    poison_attempts(gest)
    daw = fixture_run("dawinobias", tmp_path / "daw")
    sweep = fixture_run("bordia-sweep", tmp_path / "sweep")
    other = gest_run(tmp_path / "gest2", seed=9, limit=20)
    report = write_report([gest, daw, sweep, other], tmp_path / "out" / "report.html")
    html = report.read_text()
    n_figures = html.count('<figure class="figure"')
    assert n_figures >= 10

    requests: list[str] = []
    console_errors: list[str] = []
    page_errors: list[str] = []
    dialogs: list[str] = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        try:
            page = browser.new_page()
            page.on("request", lambda r: requests.append(r.url))
            page.on("console", lambda m: console_errors.append(m.text) if m.type == "error" else None)
            page.on("pageerror", lambda e: page_errors.append(str(e)))

            def on_dialog(d) -> None:
                dialogs.append(d.message)
                d.dismiss()

            page.on("dialog", on_dialog)
            page.goto(report.resolve().as_uri(), wait_until="load")
            page.wait_for_timeout(300)  # give a (wrongly) injected handler the chance to fire
            for summary in page.locator("details > summary").all():  # open every section, outer first
                summary.click()

            # every figure is drawn: an svg with a non-empty box and marks inside it
            figures = page.locator("figure.figure svg.chart")
            assert figures.count() == n_figures
            for i in range(figures.count()):
                fig = figures.nth(i)
                fig.scroll_into_view_if_needed()
                box = fig.bounding_box()
                assert box and box["width"] > 200 and box["height"] > 50, f"figure {i} not drawn"
                assert fig.locator("circle, rect").count() > 0, f"figure {i} has no marks"
            assert page.locator("section[data-task='gest']").count() == 2
            assert page.locator("section#summary").is_visible() and page.locator("section#tests").is_visible()

            # the malicious answers are text on the page, and nothing was made from them
            table = page.locator("section[data-task='gest'] table.attempts").first
            cells = table.locator("span.text").all_inner_texts()
            for payload in MALICIOUS:
                assert payload in cells
                assert page.get_by_text(payload, exact=True).first.is_visible()
            assert page.locator("script").count() == 0
            assert page.locator("img").count() == 0
        finally:
            browser.close()

    assert dialogs == []
    assert console_errors == [] and page_errors == []
    assert requests and all(u.startswith(("file://", "data:")) for u in requests), requests
    assert requests[0] == report.resolve().as_uri()
    # the layout checks of the slow demo-like test, on this small report (part of the default test run)
    _check_first_screen_and_length(report, tmp_path / "screenshots")
    shutil.rmtree(tmp_path / "out")


#: the browser window of the layout checks (CSS px); a "screen" is its height
WIDTH, SCREEN = 1400, 900


def _layout_problems(page: Any) -> list[str]:
    """Labels that do not fit: SVG texts outside their chart, table cells and headers whose text overflows."""
    return page.evaluate(
        """() => {
        const bad = [];
        for (const svg of document.querySelectorAll('svg.chart')) {
            const box = svg.getBoundingClientRect();
            if (box.width === 0) continue;  // inside a closed <details>
            for (const t of svg.querySelectorAll('text')) {
                const b = t.getBoundingClientRect();
                const out = b.left < box.left - 0.5 || b.right > box.right + 0.5;
                if (out) bad.push('svg text: ' + t.textContent);
            }
        }
        const cells = 'table.overview th, table.overview td, table.summary th, table.summary td, '
            + 'table.compare-table th';
        for (const c of document.querySelectorAll(cells)) {
            if (c.offsetWidth && c.scrollWidth > c.clientWidth + 1) bad.push('cell: ' + c.textContent.trim());
        }
        for (const s of document.querySelectorAll('#summary .scroll, #tests .scroll')) {
            if (s.scrollWidth > s.clientWidth + 1) {
                const where = s.closest('#summary') ? '#summary' : '#tests';
                bad.push('table too wide (' + where + '): ' + s.textContent.slice(0, 60));
            }
        }
        return bad;
    }"""
    )


def _check_first_screen_and_length(report: Path, shots: Path) -> dict[str, float]:
    sync_playwright = _browser_or_skip()
    shots.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        try:
            page = browser.new_page(viewport={"width": WIDTH, "height": SCREEN})
            page.goto(report.resolve().as_uri(), wait_until="load")
            page.screenshot(path=str(shots / "first-screen.png"))
            page.screenshot(path=str(shots / "full-page.png"), full_page=True)
            print(f"screenshots of {report}: {shots}")
            summary = page.locator("table.overview").first.bounding_box()  # one table per group of tests
            first_cell = page.locator("table.overview td.chip-cell").first.bounding_box()
            height = page.evaluate("document.documentElement.scrollHeight")
            width = page.evaluate("document.documentElement.scrollWidth")
            problems = _layout_problems(page)
            for s in page.locator("details > summary").all():
                s.click()
            page.screenshot(path=str(shots / "details-open.png"), full_page=True)
            problems += _layout_problems(page)
        finally:
            browser.close()
    assert summary and first_cell and summary["y"] < SCREEN / 3 and first_cell["y"] + 40 < SCREEN
    assert height < 15 * SCREEN, f"page is {height / SCREEN:.1f} screens long"
    assert width <= WIDTH, f"page is {width} px wide"
    assert problems == [], problems
    return {"screens": height / SCREEN}


@pytest.mark.slow
def test_demo_like_report_layout(tmp_path: Path) -> None:
    _browser_or_skip()
    from genderscope.report.html import write_report

    runs = demo_like_runs(tmp_path / "runs")
    report = write_report(runs, tmp_path / "report.html", title="genderscope demo-like report")
    html = report.read_text()
    assert "/tmp" not in html.split('id="runs"')[0]  # no path before the run details
    out = _check_first_screen_and_length(report, tmp_path / "screenshots")
    print(f"demo-like report: {out['screens']:.1f} screens at {WIDTH} px")


DEMO = Path(os.environ.get("GENDERSCOPE_DEMO_RUNS", "runs/demo"))


@pytest.mark.slow
def test_real_demo_report_layout(tmp_path: Path) -> None:
    """The report over a real ``make demo`` output (runs/demo, or $GENDERSCOPE_DEMO_RUNS)."""
    _browser_or_skip()
    folders = sorted(p.parent for p in DEMO.glob("*/results.json"))
    if not folders:
        pytest.skip(f"no demo runs in {DEMO} (run `make demo` or set GENDERSCOPE_DEMO_RUNS)")
    from genderscope.report.html import write_report

    report = write_report(folders, tmp_path / "report.html", title="genderscope demo report")
    out = _check_first_screen_and_length(report, tmp_path / "screenshots")
    print(f"demo report: {out['screens']:.1f} screens at {WIDTH} px")


#: every text box of the summary section (one per line of each text node), and the pairs that overlap
_OVERLAPS = """() => {
    const boxes = [];
    const walker = document.createTreeWalker(document.querySelector('#summary'), NodeFilter.SHOW_TEXT);
    for (let n = walker.nextNode(); n; n = walker.nextNode()) {
        if (!n.textContent.trim() || !n.parentElement.checkVisibility()) continue;  // e.g. a closed <details>
        const range = document.createRange();
        range.selectNodeContents(n);
        for (const r of range.getClientRects()) {
            if (r.width > 0.5 && r.height > 0.5) boxes.push({n, r, text: n.textContent.trim().slice(0, 40)});
        }
    }
    const bad = [];
    for (let i = 0; i < boxes.length; i++) {
        for (let j = i + 1; j < boxes.length; j++) {
            const a = boxes[i].r, b = boxes[j].r;
            const w = Math.min(a.right, b.right) - Math.max(a.left, b.left);
            const h = Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top);
            if (w > 1 && h > 1) bad.push(boxes[i].text + ' / ' + boxes[j].text);
        }
    }
    return {boxes: boxes.length, overlaps: bad};
}"""


@pytest.fixture(scope="module")
def many_models_report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from genderscope.report.html import write_report

    root = tmp_path_factory.mktemp("many")
    return write_report(many_model_runs(root / "runs"), root / "report.html", title="12 models × 31 tests")


def summary_overlaps(report: Path, width: int, shots: Path | None = None) -> dict[str, Any]:
    """Text boxes of the summary at ``width`` px (full table closed, then open) and the overlapping pairs;
    with ``shots``, a screenshot of the first screen and of the summary."""
    sync_playwright = _browser_or_skip()
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        try:
            page = browser.new_page(viewport={"width": width, "height": SCREEN})
            page.goto(report.resolve().as_uri(), wait_until="load")
            closed = page.evaluate(_OVERLAPS)
            if shots:
                shots.mkdir(parents=True, exist_ok=True)
                page.screenshot(path=str(shots / f"first-screen-{width}.png"))
                page.locator("#summary").screenshot(path=str(shots / f"summary-{width}.png"))
            page.locator("details.summary-full > summary").click()
            opened = page.evaluate(_OVERLAPS)
            problems = [p for p in _layout_problems(page) if "(#tests)" not in p]  # the summary's only
            wide = page.evaluate("document.documentElement.scrollWidth")
        finally:
            browser.close()
    return {
        "boxes": (closed["boxes"], opened["boxes"]),
        "overlaps": closed["overlaps"] + opened["overlaps"],
        "problems": problems,
        "width": wide,
    }


@pytest.mark.parametrize("width", [1280, 1920])
def test_summary_text_never_overlaps(many_models_report: Path, width: int, tmp_path: Path) -> None:
    html = many_models_report.read_text(encoding="utf-8")
    summary = html.split('id="summary"', 1)[1].split("</section>", 1)[0]
    assert summary.count('class="chip-cell"') >= 12 * 30 and summary.count('class="model"') >= 12
    out = summary_overlaps(many_models_report, width, tmp_path / "screenshots")
    print(f"{width} px: {out['boxes']} text boxes (full table closed, open), screenshots in {tmp_path}")
    assert out["boxes"][0] > 12 * 30, out  # every chip was measured
    assert out["overlaps"] == [], out["overlaps"][:20]
    assert out["problems"] == [] and out["width"] <= width, out
