"""How a verdict writes its numbers: accuracies in percent, differences in points, intervals in brackets."""

from __future__ import annotations

from analysis.stats.intervals.estimate import Estimate

SIGN = {"below": "<=", "above": ">="}


def plain(x: float, sign: str = "") -> str:
    """A number in its own unit: a whole number whole (a count of 53,704 samples is no 5.37e+04), else 4 digits."""
    if x == x and abs(x) < 1e15 and x == round(x):
        return f"{int(x):{sign}d}"
    return f"{x:{sign}.4g}"


def percent_text(x: float | None, percent: bool = True) -> str:
    """A number as the metric reads: an accuracy in percent, anything else (a loss, an output scale) as it is."""
    if x is None:
        return "no data"
    return f"{100 * x:.1f}%" if percent else plain(x)


def point_text(x: float, percent: bool = True) -> str:
    """A signed difference: points of accuracy, or the metric's own unit."""
    return f"{100 * x:+.1f}" if percent else plain(x, "+")


def span_text(e: Estimate, points: bool = False, percent: bool = True) -> str:
    """``[14.0, 18.2]`` (``[-4.1, +0.3] pp`` for a difference; a metric that is no accuracy in its own unit)."""
    if not percent:
        sign = "+" if points else ""
        return f"[{plain(e.low, sign)}, {plain(e.high, sign)}]"
    if points:
        return f"[{point_text(e.low)}, {point_text(e.high)}] pp"
    return f"[{100 * e.low:.1f}, {100 * e.high:.1f}]"


def unit(percent: bool) -> str:
    """The unit of a difference: `` pp`` for accuracies, none for a metric in its own unit."""
    return " pp" if percent else ""


def number_text(e: Estimate, percent: bool) -> str:
    """``16.1% [14.0, 18.2] (3 seeds)``: a number, its interval and the seeds behind it (the number alone where
    nothing has run)."""
    text = percent_text(e.value, percent)
    if e.value is not None or e.cells:
        text += f" {span_text(e, percent=percent)} ({e.seeds_text()})"
    return text
