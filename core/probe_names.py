"""What a study may ask to probe, and the columns the probes write (torch-free: the configs import it).

A trial asks for probes through its config's ``probes`` field (every family that has probes declares it):
None (the default) computes nothing and writes no column; True or ``"all"`` every probe of the family; a
comma-separated string or a list of probe names those only. :func:`probe_request` turns any of these into the
canonical value (names in the family's order, comma-separated, or None) and refuses a name the family does not
have with one line naming the field, the value and what is allowed.

Probe values are extra float columns of the evaluation rows (docs/results.md, "Probe columns"), named
``probe_<statistic>_l<layer>_h<head>`` (a stack of layers), ``probe_<statistic>_s<step>_h<head>`` (the CTL
models, whose one layer is applied step after step) and ``probe_<statistic>_s<step>`` (a statistic of the whole
step, the copy gate's); a parameter probe is per layer and head like an attention one. Layers, steps and heads
count from 1. The statistics themselves: :mod:`trainables.probes`.
"""

from __future__ import annotations

from collections.abc import Sequence

#: Attention statistics (per layer or step, and head) and gate statistics (per step), in column order. ``nearest``
#: (the adjacent key in the direction attended) is the CTL family's only: geometric attention's own question.
#: ``range`` (issue 58 item 2) came last: every column an older request wrote keeps its place. ``drift``, ``last_op``,
#: ``same_peak`` and ``blur`` (issue 58, the routing over the steps) are the CTL family's only and came after it
#: (:data:`ROUTE_PROBES`: they read more than one step's weights, or where the task puts its operations).
WEIGHT_PROBES: tuple[str, ...] = ("entropy", "peak", "distance", "range")
ROUTE_PROBES: tuple[str, ...] = ("drift", "last_op", "same_peak", "blur")
ATTENTION_PROBES: tuple[str, ...] = ("entropy", "peak", "distance", "nearest", "range", *ROUTE_PROBES)
#: ``gate_early`` and ``gate_ready`` (issue 58): the CTL family's only, when each function's column opens against when
#: its input is ready (they read where the task puts its operations: trainables/csordas2021/inside.py)
TIMING_PROBES: tuple[str, ...] = ("gate_early", "gate_ready")
GATE_PROBES: tuple[str, ...] = ("gate", "gate_open", *TIMING_PROBES)
#: Statistics of a mixer's own parameters (per layer and head), not of its weights on an input: ``bias``, NAP's
#: share of the bias b in its token weights, |b| / (|g| + |b|) (0: pure normalised attention; 1: sum pooling, what
#: App. H says NAP reverts to at S = 2). A mixer without such a parameter writes no column.
PARAMETER_PROBES: tuple[str, ...] = ("bias",)
PREFIX = "probe_"


def probe_request(value: object, allowed: Sequence[str], *, field: str = "probes") -> str | None:
    """The canonical form of a ``probes`` value: None (no probes) or the names asked, in ``allowed``'s order,
    comma-separated. ValueError naming the field, the value and the allowed names for anything else."""
    if value is None or value is False:
        return None
    if value is True or value == "all":
        return ",".join(allowed)
    if isinstance(value, str):
        names = [n.strip() for n in value.split(",") if n.strip()]
    elif isinstance(value, list | tuple) and all(isinstance(n, str) for n in value):
        names = [n.strip() for n in value]
    else:
        names = []
    bad = [n for n in names if n not in allowed]
    if not names or bad:
        why = f" ({', '.join(map(repr, bad))}: no probe of this family)" if bad else ""
        raise ValueError(f"invalid {field}={value!r}{why}; allowed: None (no probes), True or 'all' (every probe), "
                         f"or some of {', '.join(allowed)} (comma-separated or a list)")
    return ",".join(n for n in allowed if n in names)


def asked(request: str | None) -> tuple[str, ...]:
    """The probe names of a canonical request (empty for None)."""
    return () if request is None else tuple(request.split(","))


def column(statistic: str, *, layer: int | None = None, step: int | None = None, head: int | None = None) -> str:
    """The column of ``statistic`` at a layer (``_l``) or step (``_s``) and, for an attention statistic, a head
    (``_h``); each counted from 1."""
    place = f"_l{layer}" if layer is not None else f"_s{step}"
    return f"{PREFIX}{statistic}{place}" + ("" if head is None else f"_h{head}")
