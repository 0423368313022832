"""The committee page in a real browser (headless Chromium, skipped when it is not installed): it
renders, and the headline figures read from the rendered DOM equal the JSON of ``hieropt report
--json``."""

from __future__ import annotations

import shutil
import subprocess
import tempfile

import numpy as np
import pytest

from tests.report.pages import assert_page_equals_json

pytestmark = pytest.mark.browser

BROWSER = next(
    (b for b in ("chromium", "chromium-browser", "google-chrome") if shutil.which(b)), None
)
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run", "--hide-scrollbars")
needs_browser = pytest.mark.skipif(
    BROWSER is None, reason="no Chromium (Debian: apt-get install -y chromium)"
)


def chromium(*args: str) -> subprocess.CompletedProcess:
    """Run headless Chromium with a fresh profile; its stdout."""
    with tempfile.TemporaryDirectory() as profile:
        return subprocess.run(
            [BROWSER, *FLAGS, f"--user-data-dir={profile}", *args],
            capture_output=True,
            text=True,
            timeout=120,
            check=True,
        )


@pytest.mark.heavy
@needs_browser
@pytest.mark.parametrize("which", ["priced", "unpriced", "codesigned"])
def test_rendered_figures_equal_the_json(which, request, tmp_path):
    out, data = request.getfixturevalue(which)
    dom = chromium("--dump-dom", (out / "report.html").as_uri()).stdout
    assert "<svg" in dom and "Recommendation:" in dom
    rendered = tmp_path / "out"
    rendered.mkdir()
    (rendered / "report.html").write_text(dom)
    assert_page_equals_json(rendered, data)


@pytest.mark.heavy
@needs_browser
def test_screenshot_shows_the_page(priced, tmp_path):
    """The page paints: a 1200 x 900 screenshot, not blank, with the recommendation's green frame at
    the top."""
    import matplotlib.image

    out, _ = priced
    shot = tmp_path / "shot.png"
    chromium(f"--screenshot={shot}", "--window-size=1200,900", (out / "report.html").as_uri())
    img = matplotlib.image.imread(shot)[..., :3]
    assert img.shape[:2] == (900, 1200)
    # text, tables, colours
    assert len(np.unique((img * 255).astype(np.uint8).reshape(-1, 3), axis=0)) > 50
    green = np.all(np.abs(img * 255 - (0x1B, 0x78, 0x37)) < 8, axis=-1)  # the frame's #1b7837
    assert green[:400].sum() > 500

