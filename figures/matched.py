"""Matched comparison (model §10): final test accuracy against the target ε, one panel per SNR.

Reads the stored results of ``scenarios/matched.toml`` only (``sweep.json``, the finished runs,
and ``matched.json`` with the calibration of every grid point and the points that are
infeasible). Every curve is labelled with the threat model its ε covers; lines are the mean
over seeds, bands the min–max range; infeasible points are drawn as × on the axis floor, never
dropped; the references without privacy noise (ideal, channel inversion) exist at ε = ∞ only
and are drawn as horizontal lines. Points recorded as ``reused`` (a scheme that learns the same at
every SNR, run at the sweep's first SNR only; :func:`scenarios.experiments.matched.snr_independent`) are
drawn in the other panels from those runs, dashed, and marked "reused" in the table.
``<stem>.table.md`` (one table per SNR: accuracy and channel uses per scheme and ε) and
``<stem>.verdict.md`` (where FLORAS wins, ties and loses: :mod:`figures.matched_verdict`) are
written beside the figure.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np

from .common import MARKERS, SNR_DEFINITION, band_note, load_finished, save_figure
from .layout import request_legend

SWEEP = "matched"
STEM = "matched_accuracy_vs_epsilon"
INF_X = 32.0  # where ε = ∞ sits on the log2 axis

SCHEME_TEXT = {
    "floras-none": "FLORAS, no CSIT", "floras-phase": "FLORAS, phase CSIT", "central-gaussian": "central Gaussian",
    "analog-gaussian": "analog Gaussian", "ddgauss": "DDGauss", "sqsgd": "sqSGD", "ideal": "ideal (no privacy)",
    "channel-inversion": "channel inversion (no privacy)", "floras-none-capped": "FLORAS, no CSIT, capped receiver",
    "floras-none-inverse-variance": "FLORAS, no CSIT, inverse-variance receiver",
    "floras-phase-capped": "FLORAS, phase CSIT, capped receiver",
    "channel-inversion-pathloss-inversion": "channel inversion (no privacy), path-loss inversion",
    "channel-inversion-iid-nocell": "channel inversion, IID, no cell",
    "channel-inversion-iid-cell": "channel inversion, IID, UMi cell",
    "channel-inversion-shards-nocell": "channel inversion, non-IID (shards), no cell",
    "channel-inversion-shards-cell": "channel inversion, non-IID (shards), UMi cell",
}
COLORS = {
    "floras-none": "tab:blue", "floras-phase": "tab:cyan", "central-gaussian": "tab:green", "analog-gaussian": "tab:olive",
    "ddgauss": "tab:purple", "sqsgd": "tab:red", "ideal": "black", "channel-inversion": "tab:orange",
    "floras-none-capped": "tab:brown", "floras-none-inverse-variance": "tab:pink", "floras-phase-capped": "tab:gray",
    "channel-inversion-pathloss-inversion": "tab:red",
    "channel-inversion-iid-nocell": "tab:orange", "channel-inversion-iid-cell": "tab:red",
    "channel-inversion-shards-nocell": "tab:blue", "channel-inversion-shards-cell": "tab:purple",
}
REFERENCES = ("ideal", "channel-inversion")


def read_matched(sweep_dir: Path) -> dict:
    """``matched.json`` of a matched sweep (points, calibrations, tuned η), or an empty record."""
    from scenarios.store import MATCHED_RECORD, read_json

    path = Path(sweep_dir) / MATCHED_RECORD
    return read_json(path, what="matched-comparison record") if path.is_file() else {"points": []}


def eps_value(value) -> float:
    if value is None:
        return math.nan
    if isinstance(value, str):
        return math.inf if value.strip().lower() in ("inf", "infinity", "∞") else float(value)
    return float(value)


def eps_x(eps: float) -> float:
    return INF_X if math.isinf(eps) else eps


def short_threat(threat: str, width: int = 48) -> str:
    """The threat model for a legend: whole up to ``width`` characters, else up to its first ";" and, if still longer,
    without its parenthesised explanation (the caption and the tables keep the whole text)."""
    head = threat.strip()
    if len(head) > width:
        head = head.split(";", 1)[0].strip()
    if len(head) > width:
        head = head.split(" (", 1)[0].strip()
    return head or threat


def scheme_text(label: str) -> str:
    """The case's name: :data:`SCHEME_TEXT`'s, a ``-nr<N_r>`` suffix (a case with its own receive antennas) read as
    ", N_r = …", else the label itself."""
    if label in SCHEME_TEXT:
        return SCHEME_TEXT[label]
    m = re.fullmatch(r"(.+)-nr(\d+)", label)
    if m and m.group(1) in SCHEME_TEXT:
        return f"{SCHEME_TEXT[m.group(1)]}, N_r = {m.group(2)}"
    return label


def curve_label(label: str, threat: str, *, short: bool = False) -> str:
    """The scheme and its threat model; ``short`` (a legend) keeps only the head of a long threat model
    (:func:`short_threat`; the tables keep the whole text)."""
    if not threat:
        return scheme_text(label)
    return f"{scheme_text(label)} [{short_threat(threat) if short else threat}]"


def threat_of(record: dict, label: str) -> str:
    for p in record.get("points", []):
        if p.get("label") == label and p.get("threat_model"):
            return p["threat_model"]
    return ""  # every point of a matched record carries its scheme's threat model


def _accountants(res, default: str) -> str:
    """"accountant 'rdp' (the run's own)", or, when the cases differ, each accountant other than the most common one
    with the cases that used it."""
    by_case: dict[str, list[str]] = {}
    for rs in res.runsets:
        by_case.setdefault(str(rs.value("privacy.accountant", default)), []).append(str(rs.label))
    if len(by_case) <= 1:
        return f"accountant '{next(iter(by_case), default)}' (the run's own)"
    main = max(by_case, key=lambda a: len(by_case[a]))
    others = "; ".join(f"'{a}' for {', '.join(labels)}" for a, labels in by_case.items() if a != main)
    return f"accountant '{main}' ({others})"


def privacy_caption(res, record: dict) -> str:
    """Accountant, δ, relation and sampling as stored with the runs."""
    cfg = res.config().get("config", {})
    pr, tr, part = cfg.get("privacy", {}), cfg.get("training", {}), cfg.get("partition", {})
    used = {p["label"]: p["lr"] for p in record.get("points", []) if p.get("lr") is not None}
    tuned_txt = ("; η per case (chosen on a validation split): " if record.get("tuned_lr") else "; η per case: ") + \
        ", ".join(f"{k} {v:g}" for k, v in used.items()) if used else ""
    return (f"Each scheme calibrated to the target ε at δ = {pr.get('delta')} after the run's rounds, "
            f"{_accountants(res, pr.get('accountant', 'rdp'))}, {pr.get('level', 'client')}-level {pr.get('relation')} relation, "
            f"K = {tr.get('clients_per_round')} of M = {part.get('clients')} clients sampled uniformly without replacement "
            f"each round, public clip norm {cfg.get('phy', {}).get('clip_norm')}{tuned_txt}. × on the floor: the scheme "
            f"cannot reach that ε (infeasible, not run). Brackets: the threat model each ε covers.")


def default_snr(res) -> float:
    """The SNR of points whose grid does not vary it (a sweep-wide override): the runs' only SNR, else NaN."""
    snrs = {float(rs.value("phy.snr_db")) for rs in res.runsets}
    return snrs.pop() if len(snrs) == 1 else math.nan


def point_snr(p: dict, res) -> float:
    return float(p["grid"].get("phy.snr_db", default_snr(res)))


def points_by(res, key: str) -> dict:
    """{(label, value of ``key``, target ε): RunSet}."""
    out = {}
    for rs in res.runsets:
        out[(rs.label, rs.value(key), eps_value(rs.value("privacy.target_epsilon")))] = rs
    return out


def reused_from(record: dict, res, label: str, snr: float) -> float | None:
    """The SNR whose runs stand for ``label``'s reused points at ``snr`` (None if it has none)."""
    slugs = {p["reuses"] for p in record.get("points", [])
             if p["label"] == label and p["status"] == "reused" and point_snr(p, res) == snr}
    for p in record.get("points", []):
        if p["slug"] in slugs:
            return point_snr(p, res)
    return None


def make(results_dir: Path, out_dir: Path, *, stem: str = STEM, title: str = "Accuracy at equal (ε, δ)") -> list[Path]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    res = load_finished(results_dir)
    record = read_matched(results_dir)
    snrs = sorted({float(rs.value("phy.snr_db")) for rs in res.runsets}
                  | {point_snr(p, res) for p in record.get("points", []) if not math.isnan(point_snr(p, res))}, reverse=True)
    labels = list(dict.fromkeys([rs.label for rs in res.runsets] + [p["label"] for p in record.get("points", [])]))
    fig, axes = plt.subplots(1, len(snrs), figsize=(5.6 * len(snrs), 4.6), squeeze=False)
    for ax, snr in zip(axes[0], snrs):
        for k, label in enumerate(labels):
            src = reused_from(record, res, label, snr)
            at = snr if src is None else src
            sets = sorted((rs for rs in res.runsets if rs.label == label and float(rs.value("phy.snr_db")) == at),
                          key=lambda rs: eps_value(rs.value("privacy.target_epsilon")))
            color, text = COLORS.get(label), curve_label(label, threat_of(record, label), short=True)
            if src is not None:
                text += f" (runs at {src:g} dB)"
            if label in REFERENCES:
                for rs in sets:
                    acc = 100 * rs.final("test_accuracy")
                    ax.axhline(acc.mean(), color=color, ls="--" if src is None else ":", lw=1, label=text)
                    ax.axhspan(acc.min(), acc.max(), color=color, alpha=0.08, lw=0)
                continue
            if sets:
                x = np.array([eps_x(eps_value(rs.value("privacy.target_epsilon"))) for rs in sets])
                acc = [100 * rs.final("test_accuracy") for rs in sets]
                ax.plot(x, [a.mean() for a in acc], marker=MARKERS[k % len(MARKERS)], markersize=max(3.0, 7.0 - 1.5 * k), color=color, label=text, ls="-" if src is None else ":")
                if max(len(a) for a in acc) > 1:
                    ax.fill_between(x, [a.min() for a in acc], [a.max() for a in acc], color=color, alpha=0.15, lw=0)
            bad = [eps_x(eps_value(p["grid"].get("privacy.target_epsilon"))) for p in record.get("points", [])
                   if p["label"] == label and p["status"] == "infeasible" and point_snr(p, res) == snr]
            if bad:
                ax.plot(bad, [0.0] * len(bad), ls="", marker="x", ms=8, color=color, clip_on=False,
                        label=None if sets else f"{text}: infeasible")
        ax.set_xscale("log", base=2)
        ticks = [1, 2, 4, 8, 16, INF_X]
        ax.set_xticks(ticks, ["1", "2", "4", "8", "16", "∞"])
        ax.set_ylim(bottom=0)
        ax.set_xlabel("target ε (calibrated)")
        ax.set_ylabel("final test accuracy [%]")
        ax.set_title(f"SNR = {snr:g} dB", fontsize=10)
        ax.grid(True, alpha=0.3)
    request_legend(axes[0][0], fontsize=6.5, framealpha=0.85)
    fig.suptitle(title, fontsize=11)
    caption = f"{title}: final test accuracy against the target ε. {privacy_caption(res, record)}{reuse_note(record, res)} {SNR_DEFINITION}. {facts(res)}"
    paths = save_figure(fig, out_dir, stem, caption)
    paths.append(write_table(res, record, out_dir, stem))
    from .matched_verdict import write_verdict

    paths.append(write_verdict(res, record, out_dir, stem))
    return paths


def finish_single_panel(fig, ax, *, xlabel: str, title: str) -> None:
    """Axes, grid, legend and title shared by the single-panel matched figures (accuracy in % from 0)."""
    ax.set_ylim(bottom=0)
    ax.set_xlabel(xlabel)
    ax.set_ylabel("final test accuracy [%]")
    ax.grid(True, alpha=0.3)
    request_legend(ax, fontsize=6.5, framealpha=0.85)
    fig.suptitle(title, fontsize=11)


def reuse_note(record: dict, res) -> str:
    """Caption sentence naming the schemes drawn at an SNR from runs at another SNR."""
    reused = list(dict.fromkeys(p["label"] for p in record.get("points", []) if p["status"] == "reused"))
    if not reused:
        return ""
    return (" Dotted: " + ", ".join(SCHEME_TEXT.get(label, label) for label in reused) + " learn the same at every SNR "
            "(ideal channel or error-free digital uplink); they ran at one SNR only and those runs are drawn at the others "
            "(their channel uses do depend on the SNR, model §5).")


def facts(res) -> str:
    seeds = sorted({s for rs in res.runsets for s in rs.seeds})
    rounds = sorted({int(rs.metrics["round"].shape[1]) for rs in res.runsets})
    cfg = res.config().get("config", {})
    quick = " (--quick variant)" if res.manifest.get("quick") else ""
    return f"Data set: {cfg.get('data', {}).get('name')}{quick}; seeds {seeds}; {rounds[-1]} rounds; {band_note(res)}."


def mean_channel_uses(rs) -> float:
    cu = rs.metrics.get("channel_uses")
    if cu is None or not np.isfinite(cu).any():
        return math.nan
    return float(np.nanmean(cu))


def write_table(res, record: dict, out_dir: Path, stem: str) -> Path:
    """Markdown: per SNR, per scheme, accuracy mean [min, max] and channel uses per round, per ε."""
    from scenarios.store import atomic_write_text

    by_point = {p["slug"]: p for p in record.get("points", [])}
    rows = {}
    for rs in res.runsets:
        key = (rs.label, float(rs.value("phy.snr_db", math.nan)), eps_value(rs.value("privacy.target_epsilon")))
        acc = 100 * rs.final("test_accuracy")
        cal = (by_point.get(rs.point.get("slug")) or {}).get("calibration") or {}
        rows[key] = (f"{acc.mean():.1f} [{acc.min():.1f}, {acc.max():.1f}]", mean_channel_uses(rs), cal)
    for p in record.get("points", []):
        if p["status"] == "infeasible":
            key = (p["label"], point_snr(p, res), eps_value(p["grid"].get("privacy.target_epsilon")))
            rows[key] = ("n/a (no privacy noise: ε = ∞ only)" if p.get("scheme") in REFERENCES else "infeasible", math.nan, {})
    for p in record.get("points", []):
        if p["status"] == "reused":
            src = by_point.get(p["reuses"], {})
            key = (p["label"], point_snr(p, res), eps_value(p["grid"].get("privacy.target_epsilon")))
            got = rows.get((p["label"], point_snr(src, res), key[2])) if src else None
            if got is not None:  # accuracy of the runs at the other SNR; their channel uses are not this SNR's
                rows[key] = (f"{got[0]} reused from {point_snr(src, res):g} dB", math.nan, got[2])
    lines = [f"# {res.name}: final test accuracy [%] mean [min, max] over seeds; channel uses per round", ""]
    for snr in sorted({k[1] for k in rows}, reverse=True):
        epss = sorted({k[2] for k in rows if k[1] == snr})
        lines += [f"## SNR = {snr:g} dB", "", "| scheme (threat model) | " + " | ".join("ε = ∞" if math.isinf(e) else f"ε = {e:g}" for e in epss) + " |",
                  "| --- |" + " --- |" * len(epss)]
        for label in dict.fromkeys(k[0] for k in rows if k[1] == snr):
            cells = []
            for e in epss:
                acc, cu, cal = rows.get((label, snr, e), ("—", math.nan, {}))
                extra = []
                if not math.isnan(cu):
                    extra.append(f"{cu:.3g} uses")
                if cal.get("parameter") not in (None, "none"):
                    v = cal.get("value")
                    extra.append(f"{cal['parameter']} = {v:.3g}" if isinstance(v, float) else f"{cal['parameter']} = {v}")
                cells.append(acc + (f" ({'; '.join(extra)})" if extra else ""))
            lines.append(f"| {curve_label(label, threat_of(record, label))} | " + " | ".join(cells) + " |")
        lines.append("")
    path = Path(out_dir) / f"{stem}.table.md"
    atomic_write_text(path, "\n".join(lines) + "\n")
    return path
