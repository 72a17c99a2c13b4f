"""Linking clients across rounds by a curious base station (T2) against its receive antennas (model §5.2, §7.5).

Reads only stored ``floras audit --threat T2 --sweep-rx-antennas …`` JSON files (key ``linking_sweep``) from a
results directory; draws, per SNR of the sweeps, the pairwise linking success of the best attack (the largest over
the one-pair methods ``pilot``, ``signature``, ``steering``, ``joint`` and ``similarity`` of
:mod:`scenarios.audit.tracking`, each from one round to the next over every consecutive pair, and the ``clustered``
attack's link rate, where stored) against N_r, one line
per audit (its channel named from its stored configuration: cell, line of sight, pilots per update, timing offsets,
CSIT), with the chance level 1/K. The best method of each point is marked by its symbol.

Writes ``audit_linking`` (PNG, PDF, caption text) with :func:`figures.common.save_figure`.
"""

from __future__ import annotations

from pathlib import Path

from .audit_roc import load_audits
from .common import SNR_DEFINITION, save_figure
from .layout import request_legend

__all__ = ["METHODS", "linking_audits", "channel_label", "make"]

#: the one-pair methods compared, with the marker of each
METHODS = {"pilot": "o", "signature": "x", "steering": "^", "joint": "s", "similarity": "d", "clustered": "*"}


def linking_audits(results_dir: Path) -> list[dict]:
    """The T2 audits of ``results_dir`` whose ``linking_sweep`` covers at least two antenna counts."""
    return [a for a in load_audits(results_dir, threat="T2")
            if len({r["rx_antennas"] for r in a.get("linking_sweep") or []}) >= 2]


def channel_label(config: dict) -> str:
    """A short name of an audit's channel from its stored configuration."""
    cell = config.get("pathloss")
    parts = [f"{cell.upper() if len(cell) <= 3 else cell} cell" if cell and cell != "none" else "no cell"]
    if parts[0] != "no cell" and config.get("redrop"):
        parts[0] += " re-dropped every round"
    if config.get("rician_k"):
        parts.append(f"κ = {config['rician_k']:g}")
    if config.get("coherence_symbols") is not None:
        n_c, d = int(config["coherence_symbols"]), int(config["d"])
        pilots = -(-d // (n_c - 1)) if config.get("pilots") == "per-block" else 1
        parts.append(f"{pilots} pilots, {config['fading_correlation']}")
    if config.get("timing_offset"):
        parts.append(f"τ_max = {config['timing_offset']:g}")
    if config.get("csit") == "phase":
        parts.append("phase CSIT" + (f", σ_e² = {config['csi_error']:g}" if config.get("csi_error") else ""))
    return ", ".join(parts)


def _best(record: dict) -> tuple[float, str]:
    """(success, method) of the best attack of a ``linking_sweep`` record: the one-pair methods' pairwise rate, the
    clustered attack's link rate (rounds t and t + 1 in one cluster)."""
    methods = record["tracking"]["methods"]
    return max((methods[m]["link" if m == "clustered" else "pairwise"]["success_rate"], m) for m in METHODS
               if m in methods)


def make(results_dir: Path, out_dir: Path) -> list[Path]:
    """Draw the figure from every T2 audit with an N_r sweep in ``results_dir``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    audits = linking_audits(results_dir)
    if not audits:
        raise ValueError(f"results directory {results_dir} holds no T2 audit JSON with an N_r sweep "
                         "(run `floras audit --threat T2 --sweep-rx-antennas 1 2 4 8 --json FILE`)")
    snrs = sorted({r["snr_db"] for a in audits for r in a["linking_sweep"]})
    fig, axes = plt.subplots(1, len(snrs), figsize=(6.5 * len(snrs), 5.2), squeeze=False)
    Ks = sorted({a["config"]["K"] for a in audits})
    cycle = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    styles = ("-", "--", "-.")
    for ax, snr in zip(axes[0], snrs):
        for i, a in enumerate(audits):  # one colour and style per audit in every panel
            recs = sorted((r for r in a["linking_sweep"] if r["snr_db"] == snr), key=lambda r: r["rx_antennas"])
            if not recs:
                continue
            xs = [r["rx_antennas"] for r in recs]
            best = [_best(r) for r in recs]
            (line,) = ax.plot(xs, [100 * b for b, _ in best], styles[(i // len(cycle)) % len(styles)],
                              color=cycle[i % len(cycle)], label=channel_label(a["config"]))
            for x, (b, m) in zip(xs, best):
                ax.plot([x], [100 * b], METHODS[m], color=line.get_color(), ms=6, mfc="none", label="_method")
        for K in Ks:
            ax.axhline(100.0 / K, color="0.4", ls=":", lw=1, label=f"chance 1/K (K = {K})")
        ax.set_xscale("log", base=2)
        ticks = sorted({r["rx_antennas"] for a in audits for r in a["linking_sweep"]})
        ax.set_xticks(ticks, [str(x) for x in ticks])
        ax.minorticks_off()
        ax.set_xlabel("receive antennas N_r")
        ax.set_ylabel("clients linked from one round to the next [%]")
        ax.set_ylim(0, 100)
        ax.set_title(f"SNR {snr:g} dB", fontsize=10)
        ax.grid(True, which="both", alpha=0.3)
        request_legend(ax, fontsize=7.5)
    c = audits[0]["config"]
    marks = ", ".join(f"{m} {k}" for k, m in METHODS.items())
    caption = (
        f"FLORAS, T2: the base station links the K = {', '.join(str(K) for K in Ks)} scheduled clients from one round to "
        f"the next by the best of its attacks (line: the largest pairwise success over every consecutive round pair, "
        f"the clustered attack's counted alike; symbol: which attack, {marks}); N = {c['N']}, L = {c['L']}, no CSIT unless stated, the drop fixed unless re-dropped, "
        f"{', '.join(sorted({str(a['rounds']) for a in audits}))} rounds, seed {audits[0]['seed']}, one drop. "
        f"{SNR_DEFINITION}; in a cell the SNR holds at the stored reference distance. Where no attack works the largest "
        f"of the rates sits a little above chance. The accountant's ε is a T1 "
        f"statement and covers none of this (docs/cell.md, T2 sections). Files: "
        + "; ".join(f"{a['_file']}: {channel_label(a['config'])}" for a in audits) + "."
    )
    return save_figure(fig, Path(out_dir), "audit_linking", caption)
