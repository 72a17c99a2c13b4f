"""Chip-timing offsets against learning (``scenarios/cell_timing.toml``; model §5.1), from stored results only.

Channel inversion with per-client offsets τ_k ~ U(0, τ_max) chips: each symbol reaches the matched filter as
(1 − a_k)·s_k^i + a_k·s_k^{i−1}, a_k = τ_k/L_eff, so the link's intersymbol interference has energy
2·E[a²] = 2τ_max²/(3·L_eff²) relative to the signal (L_eff = L chips per symbol with ``phy.resource = "equal"``,
1 with ``"source-literal"``); the same for analog Gaussian, whose clients' noise passes the same filter (inflated by
1/(1 − 2τ_max/L_eff)², model §5.1). FLORAS at N = K (ε = ∞, chip path): its despread outputs mix the clients through
the sequences' partial correlations (model §5.1), a cost that the ISI ratio does not describe ("—" in the table).
Final test accuracy against τ_max, one line per scheme and resource convention; mean over seeds with the
min–max range as error bars. The ``.table.md`` lists every case.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from .common import SNR_DEFINITION, load_finished, save_figure
from .matched import facts, privacy_caption, read_matched

SWEEP = "cell_timing"
STEM = "cell_timing_accuracy"


def _l_eff(rs) -> int:
    """Chips per aggregated symbol: L with the equal-resource convention, 1 with one channel use per symbol."""
    return 1 if rs.value("phy.resource", "equal") == "source-literal" else int(rs.value("phy.L"))


def _scheme(rs) -> str:
    return str(rs.value("phy.scheme"))


def _tau(rs) -> float:
    return float(rs.value("phy.timing_offset", 0.0))


def isi_ratio(tau_max: float, l_eff: int) -> float:
    """2τ_max²/(3·L_eff²): the offsets' intersymbol interference over the signal energy (model §5.1)."""
    return 2.0 * tau_max**2 / (3.0 * l_eff**2)


def _acc(rs) -> np.ndarray:
    return 100 * rs.final("test_accuracy")


def make(results_dir: Path, out_dir: Path) -> list[Path]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    res = load_finished(results_dir)
    record = read_matched(results_dir)
    fig, ax = plt.subplots(figsize=(5.6, 4.2))
    colors = ("tab:orange", "tab:red", "tab:blue", "tab:purple", "tab:brown")
    lines = sorted({(_scheme(rs), _l_eff(rs)) for rs in res.runsets}, key=lambda k: (k[0] != "channel-inversion", k[0], -k[1]))
    for i, (scheme, l_eff) in enumerate(lines):
        sets = sorted((rs for rs in res.runsets if (_scheme(rs), _l_eff(rs)) == (scheme, l_eff)), key=_tau)
        accs = [_acc(rs) for rs in sets]
        mean = np.array([a.mean() for a in accs])
        err = [mean - np.array([a.min() for a in accs]), np.array([a.max() for a in accs]) - mean]
        what = f"L = {l_eff} chips per symbol" if l_eff > 1 else "one channel use per symbol (source-literal)"
        name = {"floras": "FLORAS N = K (ε = ∞)", "analog-gaussian": "analog Gaussian (ε = 8)"}.get(
            scheme, scheme.replace("-", " "))
        ax.errorbar([_tau(rs) for rs in sets], mean, yerr=err, capsize=3, marker="o" if scheme != "floras" else "s",
                    color=colors[i % len(colors)], label=f"{name}, {what}")
    ax.set_xlabel("largest chip-timing offset τ_max [chips]")
    ax.set_ylabel("final test accuracy [%]")
    ax.set_ylim(0, 100)
    ax.grid(True, alpha=0.3)
    ax.legend(loc="lower left", fontsize=8)
    fig.tight_layout()
    cfg = res.config().get("config", {}).get("phy", {})
    caption = (f"Chip-timing offsets (model §5.1): τ_k ~ U(0, τ_max) per client and round, SNR {cfg.get('snr_db')} dB, "
               "no cell, one coherence block, perfect CSI; the intersymbol interference over the signal is "
               "2τ_max²/(3·L_eff²) for channel inversion and analog Gaussian (whose clients inflate their noise by "
               "1/(1 − 2τ_max/L_eff)², keeping its ε; T1 only with offsets). FLORAS with N = K (no inactive sequence, "
               "ε = ∞) on the chip path: the offsets' cost to its link alone (with inactive sequences it has no derived "
               "ε, model §5.1). Mean over seeds, bars min–max. "
               f"{privacy_caption(res, record)} {SNR_DEFINITION}. {facts(res)}")
    paths = save_figure(fig, out_dir, STEM, caption)
    paths.append(_table(res, out_dir))
    return paths


def _table(res, out_dir: Path) -> Path:
    from scenarios.store import atomic_write_text

    lines = [f"# {res.name}: final test accuracy [%] mean [min, max] over seeds", "",
             "| case | scheme | L_eff | τ_max | ISI/signal 2τ_max²/(3L_eff²) | accuracy | ε |",
             "| --- | --- | --- | --- | --- | --- | --- |"]
    for rs in sorted(res.runsets, key=lambda r: (_scheme(r) != "channel-inversion", _scheme(r), -_l_eff(r), _tau(r))):
        acc = _acc(rs)
        eps = rs.final("epsilon").mean() if "epsilon" in rs.metrics else float("nan")
        isi = f"{isi_ratio(_tau(rs), _l_eff(rs)):.3g}" if _scheme(rs) != "floras" else "—"
        lines.append(f"| {rs.label} | {_scheme(rs)} | {_l_eff(rs)} | {_tau(rs):g} | "
                     f"{isi} | {acc.mean():.1f} [{acc.min():.1f}, {acc.max():.1f}] | "
                     f"{eps:.4g} |")
    path = Path(out_dir) / f"{STEM}.table.md"
    atomic_write_text(path, "\n".join(lines) + "\n")
    return path
