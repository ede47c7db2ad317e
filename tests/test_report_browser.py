"""End to end in headless Chromium (Debian's /usr/bin/chromium driven by Playwright): the report opens
from a file:// URL with no network request and no console error, every figure is drawn, and malicious
model answers are shown as text (no dialog, no element created from them)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from report_runs import MALICIOUS, fixture_run, gest_run, poison_attempts

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
            assert page.locator("section#comparison").is_visible()

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
    shutil.rmtree(tmp_path / "out")
