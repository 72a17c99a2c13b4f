"""Frequency selectivity against learning (``scenarios/cell_tdl.toml``; model §5.1), from stored results only.

The update over OFDM subcarriers of a TR 38.901 TDL channel (``phy.fading_correlation = "tdl"``): final test
accuracy of every case (channel inversion flat, with one subcarrier's CSIT over the band at two delay spreads, and
per subcarrier; analog Gaussian per subcarrier; the line-of-sight TDL-D cases; Doppler within the update with stale,
per-block and per-subcarrier CSIT), mean over seeds with the min–max
range as error bars. The ``.table.md`` lists every case with its profile, delay spread, its subcarriers
⌈d/(n_c·B_t)⌉ (FLORAS: its ⌈d/(n_c − 1)⌉ pilot blocks, a reference slot in each, B_t to a subcarrier), the band
(subcarriers·Δf) they span and its time
blocks (Doppler within the update).
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from phy.config import LOS_DOPPLER_TR38901

from .common import SNR_DEFINITION, load_finished, pilot_blocks, save_figure
from .matched import facts, privacy_caption, read_matched

SWEEP = "cell_tdl"
STEM = "cell_tdl_accuracy"


def _acc(rs) -> np.ndarray:
    return 100 * rs.final("test_accuracy")


def _tdl(rs) -> bool:
    return rs.value("phy.fading_correlation", "iid") == "tdl"


def _spread(rs) -> float:
    return float(rs.value("phy.delay_spread")) if _tdl(rs) else 0.0


def subcarriers(d: int, n_c: int, time_blocks: int = 1) -> int:
    """⌈d/(n_c·B_t)⌉: the subcarriers an update of d symbols occupies with B_t blocks of n_c symbols each (model §5.1)."""
    return -(-int(d) // (int(n_c) * int(time_blocks)))


def _d(rs) -> int:
    """The model dimension d the run stored (its derived values)."""
    return int((rs.configs[0].get("derived") or {}).get("d", 0)) if rs.configs else 0


def _profile(rs) -> str:
    """"TDL-A", "TDL-D", … for a run over subcarriers; "flat" for one block."""
    return f"TDL-{rs.value('phy.tdl_model', 'A')}" if _tdl(rs) else "flat"


def _csit(rs) -> str:
    """The CSIT column: channel inversion's ``inversion_csit``; FLORAS's pilots and its receiver's weighting scope."""
    if rs.value("phy.scheme") == "floras":
        return f"pilot per {rs.value('phy.floras.pilots', 'per-block').removeprefix('per-')}, weight per " \
               f"{rs.value('phy.floras.receiver_scope', 'round')}"
    return str(rs.value("phy.inversion_csit", "stale"))


def _order(rs):
    return (str(rs.value("phy.scheme")), _profile(rs), _spread(rs), _csit(rs))


def make(results_dir: Path, out_dir: Path) -> list[Path]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    res = load_finished(results_dir)
    record = read_matched(results_dir)
    sets = sorted(res.runsets, key=_order)
    accs = [_acc(rs) for rs in sets]
    mean = np.array([a.mean() for a in accs])
    palette = {"channel-inversion": "tab:orange", "analog-gaussian": "tab:green", "floras": "tab:blue"}
    colours = [palette.get(str(rs.value("phy.scheme")), "tab:gray") for rs in sets]
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    y = np.arange(len(sets))
    ax.barh(y, mean, color=colours, alpha=0.8,
            xerr=[mean - np.array([a.min() for a in accs]), np.array([a.max() for a in accs]) - mean], capsize=3)
    ax.set_yticks(y, [rs.label for rs in sets], fontsize=7)
    ax.invert_yaxis()
    ax.set_xlim(0, 100)
    ax.set_xlabel("final test accuracy [%]")
    ax.grid(True, axis="x", alpha=0.3)
    fig.tight_layout()
    cfg = res.config().get("config", {}).get("phy", {})
    profiles = " or ".join(sorted({_profile(rs) for rs in sets if _tdl(rs)}))
    # the line of sight's Doppler (f_S/f_D) of the LoS cases with time blocks; unset: TR 38.901's (model §5.1)
    turns = sorted({LOS_DOPPLER_TR38901 if rs.value("phy.los_doppler", None) is None else float(rs.value("phy.los_doppler"))
                    for rs in sets if _tdl(rs) and _profile(rs) in ("TDL-D", "TDL-E")
                    and int(rs.value("phy.tdl_time_blocks", 1)) > 1})
    turning = (f" and turning at its own Doppler shift f_S = {' or '.join(f'{r:g}' for r in turns)}·f_D over time blocks"
               if turns else "")
    caption = (f"Frequency selectivity (model §5.1): the update over OFDM subcarriers Δf = {cfg.get('subcarrier_spacing'):g} Hz "
               f"apart of a TR 38.901 {profiles} channel (the case's profile in the table; TDL-D and -E add a specular "
               f"tap at delay 0, the same on every subcarrier{turning}), n_c symbols per subcarrier, or B_t time blocks of n_c "
               "symbols with Doppler where the table says so. CSIT: 'stale', every block inverted with block 0's "
               "channel; 'per-block', each block with its own (admission and ρ per block; without time blocks one "
               "pilot per subcarrier, the labels '…-per-subcarrier-…'); 'per-subcarrier', each subcarrier's first time "
               "block kept over its B_t time blocks (labels '…-per-subcarrier-stale-…'). FLORAS: a pilot per block, "
               "its capped receiver weighing the round on the pilots' mean V̂ (scope 'round') or each block on its own "
               "(scope 'block', model §6.4), calibrated under the generic sampling bound (labels '…-generic…') or the "
               f"tight bound for several pilots (model §9.5). SNR {cfg.get('snr_db')} dB, "
               "no cell. Channel inversion ε = ∞, analog Gaussian and FLORAS at their ε. "
               f"Mean over seeds, bars min–max. {privacy_caption(res, record)} {SNR_DEFINITION}. {facts(res)}")
    paths = save_figure(fig, out_dir, STEM, caption)
    paths.append(_table(res, sets, out_dir))
    return paths


def _table(res, sets, out_dir: Path) -> Path:
    from scenarios.store import atomic_write_text

    lines = [f"# {res.name}: final test accuracy [%] mean [min, max] over seeds", "",
             "| case | scheme | profile | CSIT | delay spread [ns] | subcarriers ⌈d/(n_c·B_t)⌉ (FLORAS ⌈d/((n_c − 1)·B_t)⌉) | "
             "band [MHz] | "
             "time blocks B_t × n_c symbols, f_D·T_s | accuracy | ε |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for rs in sets:
        acc = _acc(rs)
        eps = rs.final("epsilon").mean() if "epsilon" in rs.metrics else float("nan")
        if _tdl(rs):
            d, n_c = _d(rs), int(rs.value("phy.coherence_symbols"))
            B_t = int(rs.value("phy.tdl_time_blocks", 1))
            # FLORAS: its B = ⌈d/(n_c − 1)⌉ pilot blocks (a reference slot in each) lie B_t to a subcarrier
            B = subcarriers(d, n_c, B_t) if rs.value("phy.scheme") != "floras" else -(-pilot_blocks(rs) // B_t)
            band = f"{B * float(rs.value('phy.subcarrier_spacing')) / 1e6:.3g}"
            spread, csit = f"{_spread(rs) * 1e9:g}", _csit(rs)
            time = f"{B_t} × {n_c}, {float(rs.value('phy.doppler', 0.0)):g}" if B_t > 1 else f"1 × {n_c}, static"
        else:
            B, band, spread, csit, time = 1, "—", "flat", "one block", "—"
            if rs.value("phy.scheme") == "floras":
                csit = f"one pilot, weight per {rs.value('phy.floras.receiver_scope', 'round')}"
        lines.append(f"| {rs.label} | {rs.value('phy.scheme')} | {_profile(rs)} | {csit} | {spread} | {B} | {band} | {time} | "
                     f"{acc.mean():.1f} [{acc.min():.1f}, {acc.max():.1f}] | {eps if math.isinf(eps) else round(eps, 4)} |")
    path = Path(out_dir) / f"{STEM}.table.md"
    atomic_write_text(path, "\n".join(lines) + "\n")
    return path
