"""Imperfect CSI against learning (``scenarios/cell_csi.toml``, and in a UMi cell ``scenarios/cell_csi_umi.toml`` and,
with N_r = 2 and 4 receive antennas, ``scenarios/cell_csi_antennas.toml``; with an estimate per coherence block at
3 km/h, ``scenarios/cell_aging_csi.toml``, and with N_r = 1, 2, 4 antennas there, ``scenarios/cell_aging_antennas.toml``;
model §5.1, §5.2), from stored results only. The stem is the sweep's name + ``_accuracy`` (``cell_csi_accuracy``,
``cell_csi_umi_accuracy``, ``cell_csi_antennas_accuracy``, ``cell_aging_csi_accuracy``,
``cell_aging_antennas_accuracy``); one line per scheme and number of receive antennas.

Channel inversion (ε = ∞) and analog Gaussian (its ε, calibrated on the revealed-strength law of model §5.1) with
each client inverting its estimate ĥ_k = h_k + e_k, e_k ~ CN(0, σ_e²·β_eff,k): final test accuracy against the
relative estimation error σ_e² (``phy.csi_error``), one line per case, mean over seeds with the min–max range as
error bars (σ_e² = 0, perfect CSI, drawn at the left edge of the logarithmic axis). The ``.table.md`` lists every
point with the one-pilot least-squares reference σ_e² = 1/(L·SNR) of model §5.1 beside it.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from .common import SNR_DEFINITION, load_finished, save_figure
from .matched import facts, privacy_caption, read_matched

SWEEP = "cell_csi"
STEM = "cell_csi_accuracy"
_STYLE = {"channel-inversion": ("channel inversion", "tab:orange"), "analog-gaussian": ("analog Gaussian", "tab:olive")}
_MARKERS, _LINES = {1: "o", 2: "s", 4: "^"}, {1: "-", 2: "--", 4: ":"}  # by the number of receive antennas


def _err(rs) -> float:
    return float(rs.value("phy.csi_error", 0.0))


def _n_rx(rs) -> int:
    return int(rs.value("phy.rx_antennas", 1))


def _acc(rs) -> np.ndarray:
    return 100 * rs.final("test_accuracy")


def _cell(phy: dict) -> str:
    """"no cell", or the cell's model, radius and SNR reference (one fixed drop per seed)."""
    if phy.get("pathloss", "none") in ("none", None):
        return "no cell"
    return (f"{phy['pathloss']} cell of radius {phy.get('cell_radius')} m, SNR at the {phy.get('snr_reference')}, one "
            "fixed drop per seed")


def _blocks(phy: dict) -> str:
    """"one coherence block", or the blocks and their per-block CSIT (cell_aging_csi.toml)."""
    n_c = phy.get("coherence_symbols")
    if n_c is None:
        return "one coherence block"
    return (f"coherence blocks of {n_c} symbols ({phy.get('fading_correlation')}, f_D·T_s = {phy.get('doppler'):g}), the "
            f"CSIT and its estimate re-acquired per block ({phy.get('inversion_csit')})")


def one_pilot_error(L: int, snr_db: float) -> float:
    """σ_e² = 1/(n_p·L·SNR) with n_p = 1: a least-squares estimate from one pilot symbol of L chips (model §5.1)."""
    return 1.0 / (L * 10 ** (snr_db / 10))


def make(results_dir: Path, out_dir: Path) -> list[Path]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    res = load_finished(results_dir)
    record = read_matched(results_dir)
    sets = sorted(res.runsets, key=lambda rs: (str(rs.value("phy.scheme")), _n_rx(rs), _err(rs)))
    errs = sorted({_err(rs) for rs in sets})
    positive = [e for e in errs if e > 0]
    left = min(positive) / 10 if positive else 1e-3  # where σ_e² = 0 is drawn
    fig, ax = plt.subplots(figsize=(5.6, 4.2))
    lines = list(dict.fromkeys((str(rs.value("phy.scheme")), _n_rx(rs)) for rs in sets))
    for scheme, n_rx in lines:
        mine = [rs for rs in sets if (str(rs.value("phy.scheme")), _n_rx(rs)) == (scheme, n_rx)]
        x = [_err(rs) if _err(rs) > 0 else left for rs in mine]
        accs = [_acc(rs) for rs in mine]
        mean = np.array([a.mean() for a in accs])
        eps = [rs.final("epsilon").mean() if "epsilon" in rs.metrics else float("inf") for rs in mine]
        tag = "ε = ∞" if all(np.isinf(eps)) else f"ε = {max(eps):.3g}"
        name, color = _STYLE.get(scheme, (scheme, None))
        antennas = "" if all(n == 1 for _, n in lines) else f", N_r = {n_rx}"
        ax.errorbar(x, mean, yerr=[mean - np.array([a.min() for a in accs]), np.array([a.max() for a in accs]) - mean],
                    capsize=3, marker=_MARKERS.get(n_rx, "o"), linestyle=_LINES.get(n_rx, "-"), color=color,
                    label=f"{name}{antennas} ({tag})")
    ax.set_xscale("log")
    ax.set_xticks([e if e > 0 else left for e in errs], ["0" if e == 0 else f"{e:g}" for e in errs])
    ax.set_xlabel("relative channel-estimation error σ_e²")
    ax.set_ylabel("final test accuracy [%]")
    ax.set_ylim(0, 100)
    ax.grid(True, alpha=0.3)
    ax.legend(loc="lower left", fontsize=8)
    fig.tight_layout()
    cfg = res.config().get("config", {}).get("phy", {})
    caption = (f"Imperfect CSI (model §5.1): each client inverts ĥ_k = h_k + e_k, e_k ~ CN(0, σ_e²·β_eff,k), admission "
               f"and ρ on |ĥ_k|²; SNR {cfg.get('snr_db')} dB, {_cell(cfg)}, {_blocks(cfg)}; σ_e² = 0 is perfect CSI. "
               "Analog Gaussian's clients' noise reaches the sum scaled by Re(h/ĥ) like their updates; its ε is calibrated on the "
               "revealed law of the round's strength (model §5.1; in a cell the envelope of the drop's per-client laws"
               f"{'' if cfg.get('coherence_symbols') is None else '; with an estimate per block a bound for any split of the update over the blocks: Rényi by convexity, the PLD on the largest block'}). "
               f"{_antenna_caption(lines)}FLORAS is not in this sweep. Mean over "
               f"seeds, bars min–max. {privacy_caption(res, record)} {SNR_DEFINITION}. {facts(res)}")
    stem = f"{Path(results_dir).name}_accuracy"  # STEM for SWEEP
    paths = save_figure(fig, out_dir, stem, caption)
    paths.append(_table(res, sets, out_dir, stem))
    return paths


def _antenna_caption(lines) -> str:
    """The caption's sentence on receive antennas, empty when every line has one."""
    if all(n == 1 for _, n in lines):
        return ""
    return ("With N_r > 1 receive antennas every antenna's channel is estimated, the base station's combiner is the "
            "centroid of the estimates and each client inverts aᴴĥ_k (share Re(aᴴh_k/aᴴĥ_k)); analog Gaussian's "
            "receiver noise is not counted as privacy noise and its ε covers the released aggregate (T1; model §5.2). ")


def _table(res, sets, out_dir: Path, stem: str) -> Path:
    from scenarios.store import atomic_write_text

    lines = [f"# {res.name}: final test accuracy [%] mean [min, max] over seeds", "",
             "| case | scheme | N_r | σ_e² | one-pilot LS σ_e² = 1/(L·SNR) | accuracy | ε |",
             "| --- | --- | --- | --- | --- | --- | --- |"]
    for rs in sets:
        acc = _acc(rs)
        eps = rs.final("epsilon").mean() if "epsilon" in rs.metrics else float("nan")
        ref = one_pilot_error(int(rs.value("phy.L")), float(rs.value("phy.snr_db")))
        lines.append(f"| {rs.label} | {rs.value('phy.scheme')} | {_n_rx(rs)} | {_err(rs):g} | {ref:.3g} | "
                     f"{acc.mean():.1f} [{acc.min():.1f}, {acc.max():.1f}] | {eps:.4g} |")
    path = Path(out_dir) / f"{stem}.table.md"
    atomic_write_text(path, "\n".join(lines) + "\n")
    return path
