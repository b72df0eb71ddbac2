"""The reproduction report as a browser shows it: headless Chromium renders ``report.html``.

The page must be self-contained and readable alone, so it is opened from disk in a real browser:
a screenshot must show the page (not a blank one) with the claims table's rows in their verdict
colours, and the DOM the browser built must hold the claims table with a row per claim.
Chromium comes from Debian's ``chromium`` package (scripts/test.sh installs it when run as
root); without it these tests skip, saying so.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from matplotlib import image

from conftest import run_cli

_BROWSERS = ("chromium", "chromium-browser", "google-chrome")

_HOLDS_RGB = (0xD8, 0xF0, 0xD8)
_FAILS_RGB = (0xF6, 0xD5, 0xD5)
"""The claims rows' background colours (``tr.holds``, ``tr.fails`` in the report's style)."""


def _browser() -> str:
    for name in _BROWSERS:
        path = shutil.which(name)
        if path is not None:
            return path
    pytest.skip(
        "no Chromium (chromium, chromium-browser or google-chrome) on PATH: install Debian's "
        "chromium package (scripts/test.sh does as root) to render the report"
    )


def _headless(browser: str, *args: str) -> subprocess.CompletedProcess[str]:
    # --no-sandbox: Chromium refuses to run as root with its sandbox (CI runs as root).
    return subprocess.run(
        [browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A report of two quick, deterministic experiments: one whose claims hold, one that fails."""
    _browser()  # skip before making a report no browser will open
    out = tmp_path_factory.mktemp("report")
    done = run_cli(
        "reproduce", "floyd2000/fig19", "floyd2000/fig20", "--quick", "--quiet", "--out", str(out)
    )
    assert done.returncode == 0, done.stderr
    return out


def _verdicts(out: Path) -> dict[str, str]:
    records = json.loads((out / "claims.json").read_text())
    return {f"{e['id']}/{c['id']}": c["verdict"] for e in records for c in e["claims"]}


def _has_colour(pixels: np.ndarray, rgb: tuple[int, int, int], at_least: int) -> bool:
    close = np.all(np.abs(pixels[..., :3].astype(int) - np.array(rgb)) <= 2, axis=-1)
    return int(np.count_nonzero(close)) >= at_least


def test_screenshot_shows_the_page_and_the_coloured_claims(report: Path, tmp_path: Path) -> None:
    browser = _browser()
    shot = tmp_path / "report.png"
    done = _headless(
        browser,
        "--hide-scrollbars",
        f"--screenshot={shot}",
        "--window-size=1200,2400",
        (report / "report.html").as_uri(),
    )
    assert done.returncode == 0, done.stderr
    assert shot.is_file(), done.stderr
    pixels = np.asarray(image.imread(shot))
    if pixels.dtype != np.uint8:  # matplotlib reads PNGs as floats in [0, 1]
        pixels = np.round(pixels * 255).astype(np.uint8)
    assert pixels.shape[:2] == (2400, 1200)
    # Not blank: a good part of the page is ink, and it is not one flat colour.
    gray = pixels[..., :3].mean(axis=-1)
    assert np.count_nonzero(gray < 200) > 0.01 * gray.size
    assert gray.std() > 10
    # The claims rows rendered in their verdict colours (fig19's hold, fig20's fails).
    verdicts = set(_verdicts(report).values())
    assert {"holds", "fails"} <= verdicts
    assert _has_colour(pixels, _HOLDS_RGB, 2000)
    assert _has_colour(pixels, _FAILS_RGB, 2000)


def test_dom_holds_the_claims_table_with_a_row_per_claim(report: Path) -> None:
    browser = _browser()
    done = _headless(browser, "--dump-dom", (report / "report.html").as_uri())
    assert done.returncode == 0, done.stderr
    dom = done.stdout
    assert dom.count('<table class="claims">') == 2
    rows_found = re.findall(r'<tr class="([a-z-]+)" data-claim="([^"]+)"', dom)
    rendered = {claim: verdict.replace("-", " ") for verdict, claim in rows_found}
    assert rendered == _verdicts(report)
    # Both figures are embedded and decoded by the browser (no links to files beside the page).
    assert len(re.findall(r'<img alt="[^"]+" src="data:image/png;base64,', dom)) == 2
