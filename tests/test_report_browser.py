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
import pytest
from matplotlib.image import imread

from analysis.report import build_report
from analysis.synthetic import write_synthetic_study

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
        study,
        {"architecture": ["MTE", "NAP", "max"], "d_model": [8, 16, 32], "learning_rate": [0.09, 0.0081, 0.000729]},
        seeds=(0, 1, 2),
        n_evals=6,
        name="richter2020.fig7",
        meta={
            "goal": "Which pooling can find the mode of a sequence across model sizes and learning rates?",
            "reference": "richter2020/mode__var_dim",
            "deviations": ["PyTorch instead of TensorFlow", "3 seeds instead of 5"],
            "findings": [{"description": "max pooling cannot learn the mode", "below": {"max": 0.2}}],
        },
    )
    (study / "failed").mkdir()
    (study / "failed" / "0123456789abcdef.json").write_text('{"error": "boom"}')
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
