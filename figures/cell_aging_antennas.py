"""Accuracy against the number of receive antennas at walking speed (``scenarios/cell_aging_antennas.toml`` and
``scenarios/cell_aging_antennas_floras.toml``; model §5.2, "Antennas over coherence blocks"), from stored results only.

The two sweeps share the 3 km/h link (B = 160 Clarke blocks of n_c = 1 000 symbols, per-block CSIT or a pilot per
block, no cell, 20 dB, Fashion-MNIST); the module receives every results directory named ``cell_aging_antennas*``
and draws one line per (scheme, estimation error σ_e², accountant): final test accuracy against N_r, mean over seeds
with min–max bars, and ``cell_aging_antennas_vs_nr.table.md`` with mean [min, max] and ε per point.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from .common import SNR_DEFINITION, NoFinishedRuns, load_finished, save_figure
from .matched import facts

STEM = "cell_aging_antennas_vs_nr"
_COLORS = {"channel-inversion": "tab:orange", "analog-gaussian": "tab:olive", "floras": "tab:blue"}
_NAMES = {"channel-inversion": "channel inversion", "analog-gaussian": "analog Gaussian", "floras": "FLORAS, capped"}


def _line(rs) -> tuple[str, float, str]:
    """(scheme, σ_e², accountant) of a run set."""
    return (str(rs.value("phy.scheme")), float(rs.value("phy.csi_error", 0.0) or 0.0),
            str(rs.value("privacy.accountant") or "rdp"))


def _label(scheme: str, err: float, acc: str, eps: float) -> str:
    tag = "ε = ∞" if np.isinf(eps) else f"ε = {eps:.3g}, {acc}"
    csi = "" if scheme == "floras" else (", perfect CSI" if err == 0 else f", σ_e² = {err:g}")
    return f"{_NAMES.get(scheme, scheme)}{csi} ({tag})"


def make(results_dirs, out_dir: Path) -> list[Path]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    sets, loaded = [], []
    for d in sorted(Path(p) for p in results_dirs):
        try:
            res = load_finished(d)
        except NoFinishedRuns:
            continue
        loaded.append(res)
        sets += list(res.runsets)
    if not sets:
        raise NoFinishedRuns(f"no finished runs in {[str(d) for d in results_dirs]}")
    key = lambda rs: (_line(rs), int(rs.value("phy.rx_antennas", 1)))  # noqa: E731
    sets.sort(key=key)
    fig, ax = plt.subplots(figsize=(5.6, 4.2))
    rows = ["# cell_aging_antennas*: final test accuracy [%] mean [min, max] over seeds, 3 km/h", "",
            "| scheme | σ_e² | accountant | N_r | accuracy | ε |", "| --- | --- | --- | --- | --- | --- |"]
    for line in dict.fromkeys(_line(rs) for rs in sets):
        mine = [rs for rs in sets if _line(rs) == line]
        n_rx = [int(rs.value("phy.rx_antennas", 1)) for rs in mine]
        accs = [100 * rs.final("test_accuracy") for rs in mine]
        eps = [float(rs.final("epsilon").mean()) if "epsilon" in rs.metrics else float("inf") for rs in mine]
        mean = np.array([a.mean() for a in accs])
        scheme, err, acc = line
        ax.errorbar(n_rx, mean, yerr=[mean - [a.min() for a in accs], [a.max() for a in accs] - mean], capsize=3,
                    marker="o" if err == 0 else "s", linestyle="-" if err == 0 and acc != "rdp-generic" else "--",
                    color=_COLORS.get(scheme), label=_label(scheme, err, acc, max(eps)))
        for n, a, e in zip(n_rx, accs, eps):
            rows.append(f"| {scheme} | {err:g} | {acc} | {n} | {a.mean():.1f} [{a.min():.1f}, {a.max():.1f}] | {e:.4g} |")
    ax.set_xscale("log", base=2)
    ticks = sorted({int(rs.value("phy.rx_antennas", 1)) for rs in sets})
    ax.set_xticks(ticks, [str(t) for t in ticks])
    ax.set_xlabel("receive antennas N_r")
    ax.set_ylabel("final test accuracy [%]")
    ax.set_ylim(0, 100)
    ax.grid(True, alpha=0.3)
    ax.legend(loc="lower left", fontsize=7)
    fig.tight_layout()
    caption = ("Receive antennas at walking speed (model §5.2, \"Antennas over coherence blocks\"): 3 km/h, B = 160 "
               "Clarke blocks of 1 000 symbols per update, every antenna its own process, no cell, 20 dB. Channel "
               "inversion and analog Gaussian re-acquire the CSIT (or its estimate, σ_e²) and the centroid combiner in "
               "every block; analog Gaussian counts only the clients' noise with N_r > 1 (T1). FLORAS (no CSIT, capped "
               "receiver with a weight per block, N = 32) has a pilot per block and maximum ratio on every pilot's "
               "antennas; its ε under rdp-generic, or tightest (N_r = 1: the tight Rényi bound for several pilots; "
               "N_r > 1: the PLD over the smallest of the B noise variances). K = 20 of M = 100 without replacement, "
               f"δ = 1e-05. Mean over seeds, bars min–max. {SNR_DEFINITION}. {facts(loaded[0])}")
    paths = save_figure(fig, out_dir, STEM, caption)
    from scenarios.store import atomic_write_text

    table = Path(out_dir) / f"{STEM}.table.md"
    atomic_write_text(table, "\n".join(rows) + "\n")
    return [*paths, table]
