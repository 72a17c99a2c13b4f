"""Empirical ε lower bounds (T1, T2) beside the T1 accountant's ε upper bound (model §7.5).

Reads only stored ``floras audit --json`` files from a results directory (one file per
threat model and configuration, e.g. N ∈ {20, 21, 25, 30} at K = 20) and draws ε against
γ = N − K: the accountant's ε (T1, line), the empirical lower bound under T1 and under T2
(markers; hollow where the attack made no held-out error, i.e. the bound is capped by the
number of trials), and that cap (dotted). ε = ∞ (γ = 0) is never drawn at a finite height: it is a
marker on a separate strip above the log axis, labelled "∞" (a broken axis).

Writes ``audit_epsilon`` (PNG, PDF, caption text) with :func:`figures.common.save_figure`.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from .audit_roc import load_audits
from .common import SNR_DEFINITION, save_figure
from .layout import request_legend

__all__ = ["make"]


def _num(v) -> float:
    if v is None or v == "inf":
        return math.inf
    return float(v)


def make(results_dir: Path, out_dir: Path) -> list[Path]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    audits = load_audits(results_dir)
    if not audits:
        raise ValueError(f"results directory {results_dir} holds no audit JSON (run `floras audit --json FILE`)")
    infinite = any(math.isinf(_num(a["epsilon_upper"])) for a in audits)
    fig, ax = plt.subplots(figsize=(7.5, 5.6))
    if infinite:  # a strip just above the broken log axis holds ε = ∞
        ax_inf = ax.inset_axes([0.0, 1.04, 1.0, 0.09], sharex=ax)
    upper_pts: dict[int, float] = {}
    styles = {"T1": dict(color="tab:blue", marker="o"), "T2": dict(color="tab:red", marker="s")}
    for threat in ("T1", "T2"):
        recs = sorted((a for a in audits if a["threat"] == threat), key=lambda a: a["gamma"])
        if not recs:
            continue
        g = np.array([a["gamma"] for a in recs], dtype=float)
        lo = np.array([a["empirical_epsilon_lower"] for a in recs], dtype=float)
        cap = np.array([a["game"]["max_reportable"] for a in recs], dtype=float)
        sat = np.array([bool(a["game"]["saturated"]) for a in recs])
        st = styles[threat]
        ax.plot(g, lo, linestyle="-", color=st["color"], alpha=0.5)
        ax.plot(g[~sat], lo[~sat], linestyle="none", **st, label=f"empirical ε lower bound, {threat}")
        ax.plot(g[sat], lo[sat], linestyle="none", markerfacecolor="none", **st,
                label=f"{threat}: attack made no held-out error (bound capped by trials)")
        ax.plot(g, cap, ":", color=st["color"], label=f"largest reportable with the {threat} trials")
        for a in recs:
            upper_pts[a["gamma"]] = _num(a["epsilon_upper"])
    if upper_pts:
        g = np.array(sorted(upper_pts), dtype=float)
        up = np.array([upper_pts[int(x)] for x in g])
        fin = np.isfinite(up)
        ax.plot(g[fin], up[fin], "k-", marker="^", label="accountant ε upper bound (T1 only)")
        if np.any(~fin):
            ax_inf.plot(g[~fin], np.full((~fin).sum(), 0.5), "k^", markerfacecolor="none", label="accountant: ε = ∞")
    ax.set_xlabel("γ = N − K (inactive sequences)")
    ax.set_ylabel(f"ε at δ = {audits[0]['delta']:g}")
    ax.set_yscale("log")
    ax.grid(True, alpha=0.3)
    request_legend(ax, fontsize=7.5)
    if infinite:
        _infinity_strip(ax_inf, ax)
    # the title above the ∞ strip when there is one (a figure title would sit on the strip); the paper
    # style leaves figure titles to the caption
    from .style import current

    if current() != "paper":
        (ax_inf if infinite else ax).set_title(
            "Empirical ε lower bounds (T1, T2) and the accountant's ε upper bound (T1), one round", fontsize=10)
    a0 = audits[0]
    c = a0["config"]
    up0 = a0["epsilon_upper_report"]
    confs = sorted({a["confidence"] for a in audits})
    trials = "; ".join(
        f"{t}: {', '.join(str(n) for n in sorted({a['game']['trials_per_world'] for a in audits if a['threat'] == t}))}"
        for t in ("T1", "T2") if any(a["threat"] == t for a in audits)
    )
    caption = (
        f"One FLORAS round, K = {c['K']}, L = {c['L']}, d = {c['d']}, SNR = {c['snr_db']:g} dB; {SNR_DEFINITION}; "
        f"csit = {c['csit']}; clip normalization (R = 1), C = {'√(d·P)' if c.get('C') is None else c['C']}, "
        f"δ = {a0['delta']:g}. Game: canary present vs {a0['game']['neighbour']}d "
        f"({'‖Δs‖ = 2C, S = 2C/b' if a0['game']['neighbour'] == 'replace' else '‖Δs‖ = C, S = C/b'}), "
        f"trials per world {trials}, threshold chosen on half of them and evaluated on the other half, "
        f"one-sided Clopper–Pearson bounds on FPR and FNR (Bonferroni), joint confidence {', '.join(f'{x:g}' for x in confs)}. "
        f"T1 statistic: Cauchy likelihood ratio of the released estimate; T2 statistic: the canary's cosine over the base "
        f"station's per-sequence decodes from the raw signals. Accountant (T1 only; it does not bound T2): "
        f"{up0['accountant']}, {up0['conversion']} conversion, relation {up0['relation']}, one round, the canary scheduled "
        f"(no sampling amplification), per-round multivariate Cauchy RDP bound (model §7.2). μ_k is released unprotected."
    )
    if infinite:
        caption += " Top strip (∞): configurations whose accountant ε is infinite (γ = 0), above the broken log axis."
    return save_figure(fig, Path(out_dir), "audit_epsilon", caption)


def _infinity_strip(ax_inf, ax) -> None:
    """The strip above ``ax`` that holds ε = ∞: one tick labelled "∞", the break marked by diagonals."""
    ax_inf.set_ylim(0, 1)
    ax_inf.set_yticks([0.5], ["∞"])
    ax_inf.spines["bottom"].set_visible(False)
    ax.spines["top"].set_visible(False)
    ax_inf.tick_params(axis="x", which="both", bottom=False, labelbottom=False)
    ax_inf.grid(True, axis="x", alpha=0.3)
    request_legend(ax_inf, fontsize=7.5)
    kw = dict(marker=[(-1, -0.5), (1, 0.5)], markersize=8, linestyle="none", color="k", mec="k", mew=1, clip_on=False,
              gid="decoration")
    ax_inf.plot([0, 1], [0, 0], transform=ax_inf.transAxes, label="_break", **kw)
    ax.plot([0, 1], [1, 1], transform=ax.transAxes, label="_break", **kw)
