"""Accuracy of a matched cell sweep against its grid parameter (model §5.1, §5.2, §10), and its table.

One curve per case (mean over seeds, min–max band); points recorded as infeasible in ``matched.json`` (a
target ε the scheme cannot reach) are × on the floor and ``infeasible`` in the table, with their reason
below it. The table also gives the mean clients admitted per round (of K; channel inversion's truncation and
the analog scheme's, model §6.2, §9.1), where the near–far effect of the cell shows (docs/cell.md).
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from .common import MARKERS
from .matched import COLORS, curve_label, threat_of

__all__ = ["accuracy_figure", "case_text", "draw_accuracy", "write_cell_table"]

def _same(label: str) -> str:
    return label


def run_threats(res, label: str, key: str, group=_same) -> dict:
    """{grid value: the threat model the runs' own privacy report states} for the curve ``label`` (the cases
    ``group`` maps to it; the threat model may vary with the point: analog Gaussian with N_r > 1 counts only the
    clients' noise, FLORAS with N_r > 1 covers the maximum-ratio aggregate only, model §5.2, §9.5)."""
    out = {}
    for rs in res.runsets:
        if group(rs.label) == label and rs.configs:
            threat = (rs.configs[0].get("privacy_report") or {}).get("threat_model")
            if threat:
                out[_value(rs.value(key))] = threat
    return out


def case_text(label: str, record: dict, res=None, key: str | None = None, group=_same) -> str:
    """The curve's legend text with its threat model: the runs' own when they share one, else a pointer to the table."""
    threats = set(run_threats(res, label, key, group).values()) if res is not None and key else set()
    if len(threats) > 1:
        return curve_label(label, "threat model per point: see the table")
    return curve_label(label, threats.pop() if threats else threat_of(record, label))


def legend_text(label: str, record: dict, res=None, key: str | None = None, width: int = 90, group=_same) -> str:
    """:func:`case_text` wrapped for a legend (a threat-model statement can run to 200 characters)."""
    import textwrap

    return textwrap.fill(case_text(label, record, res, key, group), width=width, subsequent_indent="  ")


def _value(v):
    """A grid value: a number (cell radius, antennas), or a name (path-loss scenario) kept as given."""
    try:
        return float(v)
    except (TypeError, ValueError):
        return str(v)


def _point_value(p: dict, key: str, res):
    """An infeasible point's value of ``key``: its grid's, else its case's override as the sweep manifest stores it
    (a case-level key such as N_r in a sweep whose cases each hold one value)."""
    if key in p["grid"]:
        return p["grid"][key]
    for point in res.manifest.get("points", []):
        if point.get("slug") == p.get("slug") and key in point.get("overrides", {}):
            return point["overrides"][key]
    raise ValueError(f"{res.name}: point {p.get('slug')!r} states no value of {key}")


def _fmt(v) -> str:
    return f"{v:g}" if isinstance(v, float) else str(v)


def _labels(res, record, group=_same) -> list:
    return list(dict.fromkeys(group(lab) for lab in [rs.label for rs in res.runsets] + [p["label"] for p in record.get("points", [])]))


def draw_accuracy(ax, res, record: dict, key: str, order: list | None = None, group=_same) -> list[float]:
    """Accuracy [%] against ``key`` per curve on ``ax``; returns the x values drawn. ``order``: the names of a
    categorical key (path-loss scenarios), drawn at positions 0, 1, … in that order; ``group``: the curve a case's
    label belongs to (default: one curve per case), for sweeps whose cases each hold one value of ``key``."""
    xs: set = set()
    pos = (lambda v: float(order.index(v))) if order is not None else (lambda v: v)
    for k, label in enumerate(_labels(res, record, group)):
        sets = sorted((rs for rs in res.runsets if group(rs.label) == label), key=lambda rs: pos(_value(rs.value(key))))
        color, text = COLORS.get(label), legend_text(label, record, res, key, group=group)
        if sets:
            x = np.array([pos(_value(rs.value(key))) for rs in sets])
            acc = [100 * rs.final("test_accuracy") for rs in sets]
            ref = label.startswith("channel-inversion")
            ax.plot(x, [a.mean() for a in acc], marker=MARKERS[k % len(MARKERS)], color=color, ls="--" if ref else "-",
                    label=text)
            if max(len(a) for a in acc) > 1:
                ax.fill_between(x, [a.min() for a in acc], [a.max() for a in acc], color=color, alpha=0.15, lw=0)
            xs.update(x.tolist())
        bad = [pos(_value(_point_value(p, key, res))) for p in record.get("points", [])
               if group(p["label"]) == label and p["status"] == "infeasible"]
        if bad:
            ax.plot(bad, [0.0] * len(bad), ls="", marker="x", ms=8, color=color, clip_on=False,
                    label=None if sets else f"{text}: infeasible")
            xs.update(bad)
    return sorted(xs)


def write_cell_table(res, record: dict, out_dir: Path, stem: str, key: str, unit: str, order: list | None = None,
                     group=_same) -> Path:
    """Markdown: per curve (``group``), final test accuracy mean [min, max] over seeds and mean admitted clients, per
    ``key`` value."""
    from scenarios.store import atomic_write_text

    rows: dict = {}
    for rs in res.runsets:
        acc = 100 * rs.final("test_accuracy")
        cell = f"{acc.mean():.1f} [{acc.min():.1f}, {acc.max():.1f}]"
        adm = rs.metrics.get("admitted")
        if adm is not None and np.isfinite(adm).any():
            cell += f" ({float(np.nanmean(adm)):.2f} of {int(rs.value('training.clients_per_round', 0))} admitted)"
        rows[(group(rs.label), _value(rs.value(key)))] = cell
    reasons = []
    for p in record.get("points", []):
        if p["status"] == "infeasible":
            if p["reason"] not in reasons:
                reasons.append(p["reason"])
            rows[(group(p["label"]), _value(_point_value(p, key, res)))] = f"infeasible ({reasons.index(p['reason']) + 1})"
    values = sorted({v for _, v in rows}, key=(lambda v: order.index(v)) if order is not None else None)
    name = key.rsplit(".", 1)[-1]
    lines = [f"# {res.name}: final test accuracy [%] mean [min, max] over seeds, against {name}", "",
             "| case (threat model) | " + " | ".join(f"{name} = {_fmt(v)}{unit}" for v in values) + " |",
             "| --- |" + " --- |" * len(values)]
    for label in dict.fromkeys(lab for lab, _ in rows):
        lines.append(f"| {case_text(label, record, res, key, group)} | " + " | ".join(rows.get((label, v), "—") for v in values) + " |")
    lines.append("")
    for label in dict.fromkeys(lab for lab, _ in rows):
        threats = run_threats(res, label, key, group)
        if len(set(threats.values())) > 1:
            lines += [f"Threat model of {label}: " + "; ".join(f"{name} = {_fmt(v)}{unit}: {th}" for v, th in sorted(threats.items())), ""]
    for i, reason in enumerate(reasons, 1):
        lines.append(f"({i}) {reason}")
    path = Path(out_dir) / f"{stem}.table.md"
    atomic_write_text(path, "\n".join(lines) + "\n")
    return path


def accuracy_figure(results_dir: Path, out_dir: Path, *, stem: str, key: str, xlabel: str, title, caption,
                    unit: str = "", log_x: bool = False, order=None, names: dict | None = None, res=None,
                    group=_same) -> list[Path]:
    """The figure ``stem`` of a cell sweep (accuracy against ``key``, :func:`draw_accuracy`) and its table.

    ``title`` and ``caption`` are texts or functions of (stored results, ``matched.json`` record, the stored
    configuration of a run); ``order``: a categorical key's values in drawing order, or a function of the stored
    results giving them; ``names``: their tick names; ``res``: the directory's results when the caller has read
    them already (another figure of the same sweep), so that they are read once; ``group``: the curve each case
    belongs to (:func:`draw_accuracy`).
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from .common import load_finished, save_figure
    from .matched import finish_single_panel, read_matched

    res = load_finished(results_dir) if res is None else res
    record = read_matched(results_dir)
    cfg = res.config().get("config", {})
    order = order(res) if callable(order) else order
    fig, ax = plt.subplots(figsize=(7.2, 4.8))
    xs = draw_accuracy(ax, res, record, key, order=order, group=group)
    if log_x:
        ax.set_xscale("log")
    if order is None:
        ax.set_xticks(xs, [f"{x:g}" for x in xs])
    else:
        ax.set_xticks(xs, [(names or {}).get(order[int(x)], order[int(x)]) for x in xs])
        ax.set_xlim(min(xs) - 0.4, max(xs) + 0.4)
    if log_x:
        ax.minorticks_off()
    text = (lambda v: v(res, record, cfg) if callable(v) else v)
    finish_single_panel(fig, ax, xlabel=xlabel, title=text(title))
    paths = save_figure(fig, out_dir, stem, text(caption))
    paths.append(write_cell_table(res, record, out_dir, stem, key, unit, order=order, group=group))
    return paths

