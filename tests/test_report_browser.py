"""The report page in a real browser: headless Chromium (Debian's ``chromium``) loads ``index.html``
from ``file://`` with the network off, and the test fails on any console message, uncaught
exception, browser log error, failed load or network request; then it takes a screenshot and checks
it is not blank.

Chromium is driven over the DevTools protocol on a pipe (``--remote-debugging-pipe``: NUL-separated
JSON on file descriptors 3 and 4), so no websocket client or port is needed. A negative control
(a page with every kind of fault) proves the checks catch what they claim to.

Nothing is installed here: ``make setup`` installs Debian's ``chromium`` when it is missing. Without
it this test fails (never skips) with a message saying so.
"""

from __future__ import annotations

import base64
import io
import json
import os
import re
import select
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pytest
from matplotlib.image import imread

from analysis.data.synthetic import write_synthetic_study
from analysis.report.build import build_report

pytestmark = pytest.mark.slow  # headless Chromium

CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
WIDTH, HEIGHT = 1280, 2000
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-extensions",
    "--disable-dev-shm-usage",
    "--remote-debugging-pipe",
    f"--window-size={WIDTH},{HEIGHT}",
]


def _chromium() -> str:
    path = CHROMIUM if Path(CHROMIUM).is_file() else shutil.which("chromium")
    if not path:
        pytest.fail(
            f"headless Chromium not found at {CHROMIUM} (nor `chromium` on PATH): run `make setup` "
            "(it installs Debian's chromium: apt-get update && apt-get install -y chromium) or set CHROMIUM=",
            pytrace=False,
        )
    return path


class Browser:
    """A headless Chromium driven over ``--remote-debugging-pipe`` (just enough of the DevTools protocol)."""

    def __init__(self, user_data_dir: Path) -> None:
        to_child_r, self._to_child = os.pipe()
        self._from_child, from_child_w = os.pipe()

        def fds() -> None:  # the protocol pipe is fd 3 (commands in) and fd 4 (replies out) of the child
            os.dup2(to_child_r, 3)
            os.dup2(from_child_w, 4)

        self.proc = subprocess.Popen(
            [_chromium(), *FLAGS, f"--user-data-dir={user_data_dir}", "about:blank"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            pass_fds=(3, 4),  # kept open (close_fds runs after preexec_fn)
            preexec_fn=fds,
        )
        os.close(to_child_r)
        os.close(from_child_w)
        self._buf = b""
        self._id = 0
        self.events: list[dict[str, Any]] = []

    def close(self) -> None:
        for fd in (self._to_child, self._from_child):
            try:
                os.close(fd)
            except OSError:
                pass
        self.proc.terminate()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()

    def _read_message(self, deadline: float) -> dict[str, Any]:
        while b"\0" not in self._buf:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self._from_child], [], [], left)[0]:
                raise TimeoutError("no reply from Chromium in time")
            chunk = os.read(self._from_child, 1 << 20)
            if not chunk:
                raise RuntimeError(f"Chromium closed the protocol pipe (exit code {self.proc.poll()})")
            self._buf += chunk
        raw, _, self._buf = self._buf.partition(b"\0")
        return json.loads(raw)

    def send(self, method: str, params: dict[str, Any] | None = None, session: str | None = None,
             timeout: float = 30) -> dict[str, Any]:
        """Send one command, collect events until its reply, return the reply's ``result``."""
        self._id += 1
        msg: dict[str, Any] = {"id": self._id, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        os.write(self._to_child, json.dumps(msg).encode() + b"\0")
        deadline = time.monotonic() + timeout
        while True:
            reply = self._read_message(deadline)
            if reply.get("id") == self._id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            self.events.append(reply)

    def wait_for(self, method: str, timeout: float = 30) -> None:
        """Collect events until ``method`` arrives."""
        deadline = time.monotonic() + timeout
        while not any(e.get("method") == method for e in self.events):
            self.events.append(self._read_message(deadline))


def load_page(url: str, screenshot: Path, user_data_dir: Path) -> dict[str, Any]:
    """Open ``url`` in a fresh headless Chromium, return the problems it reported and page facts.

    Returns ``{"problems": [...], "images": [{"src", "ok"}], "title": str, "height": int}``; also
    writes a ``WIDTH`` x ``HEIGHT`` PNG of the top of the page to ``screenshot``.
    """
    browser = Browser(user_data_dir)
    try:
        target = browser.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = browser.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        for domain in ("Page", "Runtime", "Log", "Network"):
            browser.send(f"{domain}.enable", session=session)
        browser.send(
            "Emulation.setDeviceMetricsOverride",
            {"width": WIDTH, "height": HEIGHT, "deviceScaleFactor": 1, "mobile": False},
            session=session,
        )
        browser.events.clear()
        browser.send("Page.navigate", {"url": url}, session=session)
        browser.wait_for("Page.loadEventFired", timeout=60)
        facts = browser.send(
            "Runtime.evaluate",
            {
                "expression": "JSON.stringify({title: document.title, height: document.body.scrollHeight,"
                " images: [...document.images].map(i => ({src: i.src.slice(0, 40),"
                " ok: i.complete && i.naturalWidth > 0}))})",
                "returnByValue": True,
            },
            session=session,
        )
        shot = browser.send("Page.captureScreenshot", {"format": "png"}, session=session, timeout=60)
        screenshot.write_bytes(base64.b64decode(shot["data"]))
    finally:
        browser.close()
    return {"problems": _problems(browser.events, url), **json.loads(facts["result"]["value"])}


def _problems(events: list[dict[str, Any]], url: str) -> list[str]:
    """Console messages, exceptions, log errors, failed loads and any request leaving the page's file."""
    out = []
    for e in events:
        method, p = e.get("method"), e.get("params", {})
        if method == "Runtime.consoleAPICalled":
            args = " ".join(str(a.get("value", a.get("description", ""))) for a in p.get("args", []))
            out.append(f"console.{p.get('type')}: {args}")
        elif method == "Runtime.exceptionThrown":
            d = p.get("exceptionDetails", {})
            out.append(f"uncaught exception: {d.get('exception', {}).get('description') or d.get('text')}")
        elif method == "Log.entryAdded" and p.get("entry", {}).get("level") in ("error", "warning"):
            out.append(f"log {p['entry']['level']}: {p['entry'].get('text')} {p['entry'].get('url', '')}")
        elif method == "Network.loadingFailed":
            out.append(f"load failed: {p.get('errorText')} ({p.get('type')})")
        elif method == "Network.requestWillBeSent":
            req = p.get("request", {}).get("url", "")
            if not (req == url or req.startswith("data:")):
                out.append(f"request outside the page: {req[:100]}")
    return out


def assert_not_blank(png: Path) -> np.ndarray:
    """The screenshot decodes, has the expected size, and is neither one colour nor near-uniform."""
    img = imread(png)
    assert img.shape[:2] == (HEIGHT, WIDTH), img.shape
    rgb = img[..., :3].reshape(-1, 3)
    assert rgb.std(axis=0).max() > 0.05, f"screenshot {png} is (nearly) blank"
    assert np.unique((rgb * 255).astype(np.uint8), axis=0).shape[0] > 50, f"screenshot {png} has too few colours"
    dark = (rgb.mean(axis=1) < 0.5).mean()
    assert 0.005 < dark < 0.6, f"screenshot {png}: {dark:.1%} dark pixels (no text, or a black page)"
    return img


@pytest.fixture(scope="module")
def report_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("browser")
    study = tmp / "richter2020.fig7.synthetic"
    write_synthetic_study(
        study,  # learning rates as a study file writes them: 0.3**6 is 0.0007289999999999998
        {"architecture": ["MTE", "NAP", "max"], "d_model": [8, 16, 32], "learning_rate": [0.3**2, 0.3**4, 0.3**6]},
        seeds=(0, 1, 2),
        n_evals=6,
        name="richter2020.fig7",
        meta={
            "goal": "Which pooling can find the mode of a sequence across model sizes and learning rates?",
            "reference": "richter2020/mode__var_dim",
            "deviations": ["PyTorch instead of TensorFlow", "3 seeds instead of 5"],
            "findings": [{"description": "max pooling cannot learn the mode", "below": {"max": 0.2}}],
            "budget": "adaptive",  # the budget section: its seeds-per-cell picture
            "looks_taken": [{"look": 1, "statuses": ["PASS"], "models": 76, "requests": []}],
        },
    )
    (study / "failed").mkdir()
    (study / "failed" / "0123456789abcdef.json").write_text('{"error": "boom"}')
    # one cell not run: its trial file removed (the grid shows it hatched)
    rows = pl.read_parquet(study / "trials" / "*.parquet", include_file_paths="path")
    gone = rows.filter(pl.col("architecture") == "max", pl.col("d_model") == 32, pl.col("learning_rate") == 0.09)
    Path(gone["path"][0]).unlink()
    # one cell kept one seed of three: a dark cell of the budget picture
    thin = Path(rows.filter(pl.col("architecture") == "MTE", pl.col("d_model") == 8,
                            pl.col("learning_rate") == 0.3**4)["path"][0])
    pl.read_parquet(thin).filter(pl.col("seed") == 0).write_parquet(thin)
    build_report(study, tmp / "report")
    return tmp / "report"


def test_report_page_loads_cleanly_and_renders(report_dir: Path, tmp_path: Path) -> None:
    index = report_dir / "index.html"
    shot = Path(os.environ.get("REPORT_SCREENSHOT", tmp_path / "report.png"))
    started = time.monotonic()
    page = load_page(index.as_uri(), shot, tmp_path / "profile")
    assert page["problems"] == [], "\n".join(page["problems"])
    assert page["title"] == "richter2020.fig7"
    assert page["images"] and all(i["ok"] for i in page["images"]), page["images"]
    assert all(i["src"].startswith("data:image/png;base64,") for i in page["images"])
    assert page["height"] > HEIGHT  # a long page: grids, curves, tables
    assert_not_blank(shot)
    assert time.monotonic() - started < 60


def test_report_html_is_self_contained(report_dir: Path) -> None:
    text = (report_dir / "index.html").read_text()
    assert not re.search(r"(?i)\b(?:https?|ftp):|//[a-z0-9.-]+\.[a-z]{2,}/", text), "an external URL"
    assert not re.search(r"(?i)<(?:link|iframe|object|embed)\b", text), "an external resource tag"
    assert not re.search(r"(?i)<script\b[^>]*\bsrc\s*=", text), "a script from outside the page"
    # inline scripts only: the interactive grids' one script and their JSON data
    assert re.findall(r"(?i)<script\b[^>]*>", text).count("<script>") == 1
    srcs = re.findall(r"""(?i)\bsrc\s*=\s*["']([^"']*)""", text)
    assert srcs and all(s.startswith("data:image/png;base64,") for s in srcs)
    assert "url(" not in text
    # what a reader needs is on the page
    for needed in ("Goal", "Search space", "Progress", "diverged", "R = worst seed", "Robustness",
                   "Learning curves", "published", "Deviations from the paper", "3 seeds instead of 5"):
        assert needed in text, needed


def test_negative_control_every_fault_is_caught(tmp_path: Path) -> None:
    bad = tmp_path / "bad.html"
    bad.write_text(
        "<!DOCTYPE html><html><head><title>bad</title></head><body><h1>bad page</h1>"
        "<img src='missing.png'><img src='http://192.0.2.1/x.png'>"
        "<script>console.error('my-console-error'); undefinedFunction();</script></body></html>"
    )
    page = load_page(bad.as_uri(), tmp_path / "bad.png", tmp_path / "profile")
    text = "\n".join(page["problems"])
    assert "console.error: my-console-error" in text
    assert "undefinedFunction" in text
    assert "missing.png" in text or "load failed" in text
    assert "request outside the page: http://192.0.2.1/x.png" in text
    with pytest.raises(AssertionError):
        assert_not_blank(tmp_path / "bad.png")  # one heading on a white page is "blank"


# ----------------------------------------------------------------- the interactive grid, driven for real

GRID_ID = "cells-grid_val_accuracy"


class Page:
    """One loaded page in a fresh headless Chromium: evaluate JavaScript, move and click the mouse, screenshot."""

    def __init__(self, url: str, user_data_dir: Path) -> None:
        self.browser = Browser(user_data_dir)
        target = self.browser.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        self.session = self.browser.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        for domain in ("Page", "Runtime", "Log", "Network"):
            self.browser.send(f"{domain}.enable", session=self.session)
        self.browser.send("Emulation.setDeviceMetricsOverride", {"width": WIDTH, "height": HEIGHT,
                                                                 "deviceScaleFactor": 1, "mobile": False},
                          session=self.session)
        self.browser.events.clear()
        self.browser.send("Page.navigate", {"url": url}, session=self.session)
        self.browser.wait_for("Page.loadEventFired", timeout=60)
        self.url = url

    def js(self, expression: str) -> Any:
        reply = self.browser.send("Runtime.evaluate", {"expression": f"JSON.stringify({expression})",
                                                       "returnByValue": True}, session=self.session)
        result = reply["result"]
        return json.loads(result["value"]) if "value" in result else None  # undefined: no value

    def mouse(self, kind: str, x: float, y: float) -> None:
        params: dict[str, Any] = {"type": kind, "x": x, "y": y}
        if kind != "mouseMoved":
            params |= {"button": "left", "clickCount": 1}
        self.browser.send("Input.dispatchMouseEvent", params, session=self.session)

    def screenshot(self, path: Path) -> None:
        shot = self.browser.send("Page.captureScreenshot", {"format": "png"}, session=self.session, timeout=60)
        path.write_bytes(base64.b64decode(shot["data"]))

    def problems(self) -> list[str]:
        return _problems(self.browser.events, self.url)


def _cell_centre(page: Page, panel: str, x: str, y: str) -> tuple[float, float]:
    """Viewport coordinates of the centre of cell (panel, x, y) of the val_accuracy grid (after scrolling to it)."""
    page.js(f"document.getElementById('{GRID_ID}').scrollIntoView()")
    geo = page.js(f"""(() => {{ const w = document.getElementById('{GRID_ID}'), img = w.querySelector('img'),
        r = img.getBoundingClientRect(), d = JSON.parse(w.querySelector('script.celldata').textContent);
        return {{left: r.left, top: r.top, sx: r.width / img.naturalWidth, sy: r.height / img.naturalHeight,
                 xs: d.xs, ys: d.ys, panels: d.panels.map(p => [p.panel, p.box])}}; }})()""")
    box = dict(geo["panels"])[panel]
    i, j = geo["xs"].index(x), geo["ys"].index(y)
    cx = box[0] + (i + 0.5) * (box[2] - box[0]) / len(geo["xs"])
    cy = box[1] + (j + 0.5) * (box[3] - box[1]) / len(geo["ys"])
    return geo["left"] + cx * geo["sx"], geo["top"] + cy * geo["sy"]


def _expected_cell(study: Path, arch: str, d: int, lr: float) -> dict[str, Any]:
    """The cell's numbers recomputed from the Parquet rows with numpy (independent of analysis/)."""
    df = pl.read_parquet(study / "trials" / "*.parquet").filter(
        pl.col("architecture") == arch, pl.col("d_model") == d, (pl.col("learning_rate") - lr).abs() < 1e-12)
    seeds = sorted(df["seed"].unique().to_list())
    steps = sorted(df["step"].unique().to_list())
    acc = np.array([[df.filter(pl.col("seed") == s, pl.col("step") == t)["val_accuracy"][0] for t in steps]
                    for s in seeds])  # (seed, step)
    mean = acc.mean(axis=0)
    diverged = [s for s in seeds if (df.filter(pl.col("seed") == s)["status"] == "diverged").any()]
    return {"r": acc.min(axis=0).max(), "g": mean.max(), "b": acc.max(axis=0).max(), "seeds": seeds,
            "diverged": diverged, "best_step": steps[int(np.argmax(mean))], "curves": acc, "steps": steps}


def test_hovering_and_clicking_a_grid_cell_shows_its_numbers_and_seed_curves(report_dir: Path,
                                                                            tmp_path: Path) -> None:
    study = report_dir.parent / "richter2020.fig7.synthetic"
    expected = _expected_cell(study, "NAP", 16, 0.09)
    shots = Path(os.environ.get("REPORT_SCREENSHOT_DIR", tmp_path))
    page = Page((report_dir / "index.html").as_uri(), tmp_path / "profile")
    try:
        x, y = _cell_centre(page, "NAP", "16", "0.09")
        page.mouse("mouseMoved", x, y)
        tip = page.js("[getComputedStyle(document.querySelector('.celltip')).display, "
                      "document.querySelector('.celltip').innerText]")
        page.screenshot(shots / "hover.png")
        page.mouse("mousePressed", x, y)
        page.mouse("mouseReleased", x, y)
        lines = page.js(f"[...document.querySelectorAll('#{GRID_ID} .cellcurves polyline')].map(p => "
                        "[p.dataset.seed, p.dataset.values, p.getAttribute('points').split(' ').length])")
        title = page.js(f"document.querySelector('#{GRID_ID} .cellcurves p').innerText")
        page.screenshot(shots / "click.png")
        # a cell that was not run (its trial file removed in the fixture): hatched, and says so
        x2, y2 = _cell_centre(page, "max", "32", "0.09")
        page.mouse("mouseMoved", x2, y2)
        not_run = page.js("document.querySelector('.celltip').innerText")
        page.screenshot(shots / "not_run.png")
        shot = imread(shots / "not_run.png")[..., :3]
        problems = page.problems()
    finally:
        page.browser.close()
    assert problems == [], problems
    assert tip[0] == "block"
    def pct(v: float) -> str:
        return f"{100 * v:.1f}%"
    assert tip[1].splitlines() == [
        "NAP · d_model=16, learning_rate=0.09",
        f"val_accuracy: R {pct(expected['r'])} (worst seed) · G {pct(expected['g'])} (mean) · "
        f"B {pct(expected['b'])} (best seed)",
        f"{len(expected['seeds'])} seeds · {len(expected['diverged'])} diverged · best G at step "
        f"{expected['best_step']}",
        "click: per-seed learning curves",
    ]
    assert title.startswith("NAP · d_model=16, learning_rate=0.09 · val_accuracy of every seed")
    assert [int(s) for s, _, _ in lines] == expected["seeds"]
    for (_, values, n_points), curve in zip(lines, expected["curves"], strict=True):
        assert np.allclose([float(v) for v in values.split(",")], curve, atol=5e-5)
        assert n_points == len(expected["steps"])
    assert not_run.splitlines() == ["max · d_model=32, learning_rate=0.09", "not run"]
    # the not-run cell is hatched: grey stripes on white, not a flat colour
    patch = shot[int(y2) - 3:int(y2) + 4, int(x2) - 3:int(x2) + 4].reshape(-1, 3)
    assert (patch.mean(axis=1) > 0.95).any() and ((patch.mean(axis=1) > 0.4) & (patch.mean(axis=1) < 0.7)).any()


def test_tables_fit_1280_px_and_have_human_headers(report_dir: Path, tmp_path: Path) -> None:
    page = Page((report_dir / "index.html").as_uri(), tmp_path / "profile")
    try:
        widths = page.js("[...document.querySelectorAll('.scroll')].map(s => [s.scrollWidth, s.clientWidth])")
        right = page.js("Math.max(...[...document.querySelectorAll('table.data')].map(t => "
                        "t.getBoundingClientRect().right)) - document.documentElement.clientWidth")
        headers = page.js("[...document.querySelectorAll('table.data th')].map(t => t.innerText)")
    finally:
        page.browser.close()
    assert len(widths) >= 4 and all(scroll <= client for scroll, client in widths), widths  # no sideways scroll
    assert right <= 0  # no table reaches past the window
    assert headers and not [h for h in headers if "_" in h], [h for h in headers if "_" in h]
    assert "validation accuracy" in " ".join(headers) or "val mean (%)" in headers


def test_the_search_space_reads_as_written_and_the_budget_picture_writes_each_cells_seeds(report_dir: Path,
                                                                                       tmp_path: Path) -> None:
    """The search-space table shows 0.3**6 as 0.000729 (not 0.0007289999999999998); the budget's seeds-per-cell
    picture is on the page, and its one dark cell (1 seed of 3) carries its count in white."""
    page = Page((report_dir / "index.html").as_uri(), tmp_path / "profile")
    try:
        space = page.js("""(() => {
            let e = [...document.querySelectorAll('h2')].find(h => h.innerText === 'Search space');
            while (e && e.tagName !== 'TABLE') e = e.nextElementSibling;
            return [...e.querySelectorAll('tbody tr')].map(r => [...r.cells].map(c => c.innerText)); })()""")
        body = page.js("document.body.innerText")
        picture = page.js("""(() => { const img = document.querySelector('img[alt="seeds per cell"]'),
            c = document.createElement('canvas');
            c.width = img.naturalWidth; c.height = img.naturalHeight; c.getContext('2d').drawImage(img, 0, 0);
            return {shown: img.getBoundingClientRect().width, png: c.toDataURL('image/png')}; })()""")
        problems = page.problems()
    finally:
        page.browser.close()
    assert problems == [], problems
    assert ["nuisance", "learning_rate", "0.09, 0.0081, 0.000729"] in space, space
    assert ["scientific", "d_model", "8, 16, 32"] in space, space
    assert "0.000728999" not in body and "7.3e-04" not in body  # neither float noise nor exponents
    assert picture["shown"] > 300
    img = imread(io.BytesIO(base64.b64decode(picture["png"].split(",", 1)[1])), format="png")[..., :3]
    dark = (np.abs(img - 1 / 3).max(axis=2) < 2 / 255)  # the cell of 1 seed of 3: grey 85
    per_row, per_col = dark.sum(axis=1), dark.sum(axis=0)  # the cell's rows and columns, not stray text pixels
    rows, cols = np.nonzero(per_row >= per_row.max() / 2)[0], np.nonzero(per_col >= per_col.max() / 2)[0]
    assert len(rows) >= 15 and len(cols) >= 15, (len(rows), len(cols))
    cell = img[rows.min():rows.max() + 1, cols.min():cols.max() + 1]
    light = cell.min(axis=2) > 0.6  # the cell is grey 0.33: light pixels are its count's, written in white
    assert 10 <= light.sum() < 0.1 * light.size, light.sum()
