"""Channel aging against learning (``scenarios/cell_aging.toml``; model §5.1), from stored results only.

Left: channel inversion with the CSIT of block 0 kept over the update (and channel inversion and analog Gaussian
with the CSIT re-acquired per block), final test accuracy against the Doppler cycles over the update f_D·T_s·d (the stored ``phy.doppler`` times the stored d; the CSIT's correlation with the
channel at the update's last symbol is J₀(2π·f_D·T_s·d) under the exact Clarke law); the no-block run as a
dashed lines. Right: FLORAS with a pilot per coherence block against the pilot blocks B per update (the runs'
own privacy report), B = 1 the run without blocks, with the receiver weighing the round or each block; a
star for blocks on a static channel. Mean over seeds with the min–max range as error bars; the
``.table.md`` lists every case.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from .common import SNR_DEFINITION, load_finished, pilot_blocks, save_figure
from .matched import facts, privacy_caption, read_matched

SWEEP = "cell_aging"
STEM = "cell_aging_accuracy"


def _d(rs) -> int:
    return int((rs.configs[0].get("derived") or {}).get("d", 0)) if rs.configs else 0


def _cycles(rs) -> float | None:
    """f_D·T_s·d, or None for a run without coherence blocks."""
    if rs.value("phy.coherence_symbols") in (None, "none"):
        return None
    return float(rs.value("phy.doppler", 0.0)) * _d(rs)


def _scope(rs) -> str:
    """FLORAS's receiver weighting: one weight per round, or per pilot block (model §6.4)."""
    return str(rs.value("phy.floras.receiver_scope", "round"))


def _accountant(rs) -> str:
    """The run's privacy accountant: FLORAS's per-block cases run under the generic and the tight bound."""
    return str(rs.value("privacy.accountant", "rdp"))


def _acc(rs) -> np.ndarray:
    return 100 * rs.final("test_accuracy")


def _errorbar(ax, x, accs, **kw):
    mean = np.array([a.mean() for a in accs])
    lo = mean - np.array([a.min() for a in accs])
    hi = np.array([a.max() for a in accs]) - mean
    ax.errorbar(x, mean, yerr=[lo, hi], capsize=3, **kw)


def make(results_dir: Path, out_dir: Path) -> list[Path]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    res = load_finished(results_dir)
    record = read_matched(results_dir)
    analog = [rs for rs in res.runsets if rs.value("phy.scheme") in ("channel-inversion", "analog-gaussian")]
    fl = [rs for rs in res.runsets if rs.value("phy.scheme") == "floras"]
    fig, (left, right) = plt.subplots(1, 2, figsize=(9.6, 4.4))
    series = (("channel-inversion", "stale", "tab:orange", "o", "channel inversion, CSIT of block 0 (ε = ∞)"),
              ("channel-inversion", "per-block", "tab:red", "D", "channel inversion, CSIT per block (ε = ∞)"),
              ("analog-gaussian", "per-block", "tab:green", "^", "analog Gaussian, CSIT per block (ε = 8)"))
    for scheme, csit, color, marker, text in series:
        sets = sorted((rs for rs in analog if rs.value("phy.scheme") == scheme and _cycles(rs) is not None
                       and rs.value("phy.inversion_csit", "stale") == csit), key=_cycles)
        if sets:
            _errorbar(left, [_cycles(rs) for rs in sets], [_acc(rs) for rs in sets], marker=marker, color=color,
                      label=text, ls="-" if len(sets) > 1 else "none")
            left.set_xscale("log")
    for rs in analog:
        if _cycles(rs) is None:
            ci = rs.value("phy.scheme") == "channel-inversion"
            left.axhline(_acc(rs).mean(), color="tab:orange" if ci else "tab:green", ls="--",
                         label=f"{'channel inversion' if ci else 'analog Gaussian'}, one block")
    left.set_xlabel("Doppler cycles over the update f_D·T_s·d")
    left.set_ylabel("final test accuracy [%]")
    left.set_title("Analog AirComp: channel inversion, analog Gaussian")
    moving = [rs for rs in fl if pilot_blocks(rs) == 1 or float(rs.value("phy.doppler", 0.0)) > 0]
    for acc_name, scope, color, marker in (("rdp-generic", "round", "tab:blue", "s"),
                                           ("rdp-generic", "block", "tab:purple", "v"), ("rdp", "block", "tab:brown", "P")):
        # the one-block run (B = 1) under the same accountant is the reference of both weightings (they coincide)
        by_b = sorted((rs for rs in moving if _accountant(rs) == acc_name and (_scope(rs) == scope or pilot_blocks(rs) == 1)),
                      key=pilot_blocks)
        if any(pilot_blocks(rs) > 1 for rs in by_b):
            _errorbar(right, [pilot_blocks(rs) for rs in by_b], [_acc(rs) for rs in by_b], marker=marker, color=color,
                      label=f"FLORAS, weight per {scope}, {acc_name} (ε = 8)")
            right.set_xscale("log")
    for acc_name, color in (("rdp-generic", "black"), ("rdp", "tab:brown")):
        static = sorted((rs for rs in fl if rs not in moving and _accountant(rs) == acc_name), key=pilot_blocks)
        if static:  # blocks on a channel constant over the update: the pilots' own noise alone differs per block
            _errorbar(right, [pilot_blocks(rs) for rs in static], [_acc(rs) for rs in static], marker="*", color=color,
                      ls="none", markersize=10, label=f"the same, channel static (0 km/h), {acc_name}")
            right.set_xscale("log")
    right.set_xlabel("pilot blocks per update B")
    right.set_title("A pilot per block: FLORAS")
    for ax in (left, right):
        ax.set_ylim(0, 100)
        ax.grid(True, alpha=0.3)
        ax.legend(loc="lower left" if ax is left else "upper right", fontsize=8)
    fig.tight_layout()
    cfg = res.config().get("config", {}).get("phy", {})
    n_c = sorted({int(rs.value("phy.coherence_symbols")) for rs in analog if _cycles(rs) is not None})
    caption = (f"Channel aging (model §5.1): coherence blocks of {', '.join(map(str, n_c)) or 'n_c'} symbols drawn from the "
               f"exact Clarke/Jakes law where the runs have blocks; SNR {cfg.get('snr_db')} dB, no cell. Left: the clients "
               "pre-invert the whole update with block 0's channel (stale) or re-acquire it with admission in every "
               "block (per block; dashed: one block per update); right: FLORAS with its capped receiver "
               "and a pilot per block, the receiver weighing the round on the pilots' mean V̂ or each block on its own "
               "(model §6.4), calibrated under the generic sampling bound (rdp-generic) or the tight bound for several "
               "pilots (rdp, model §9.5), each series from the one-pilot run under its own accountant, at 3 km/h except "
               "the stars (0 km/h: only the pilots' noise differs between blocks). Mean over seeds, bars min–max. "
               f"{privacy_caption(res, record)} {SNR_DEFINITION}. {facts(res)}")
    paths = save_figure(fig, out_dir, STEM, caption)
    paths.append(_table(res, out_dir))
    return paths


def _table(res, out_dir: Path) -> Path:
    from scenarios.store import atomic_write_text

    lines = [f"# {res.name}: final test accuracy [%] mean [min, max] over seeds", "",
             "| case | scheme | CSIT (FLORAS: receiver weighting) | f_D·T_s | f_D·T_s·d | J₀(2π·f_D·T_s·d) | pilot blocks B | accuracy | ε |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    from scipy.special import j0

    for rs in res.runsets:
        acc, cyc = _acc(rs), _cycles(rs)
        eps = rs.final("epsilon").mean() if "epsilon" in rs.metrics else float("nan")
        if rs.value("phy.scheme") == "floras":
            csit = f"weight per {_scope(rs)}" if pilot_blocks(rs) > 1 else "—"
        else:
            csit = rs.value("phy.inversion_csit", "stale") if cyc is not None else "—"
        lines.append(f"| {rs.label} | {rs.value('phy.scheme')} | {csit} | "
                     f"{'—' if cyc is None else format(float(rs.value('phy.doppler')), 'g')} | "
                     f"{'—' if cyc is None else format(cyc, '.3g')} | {'—' if cyc is None else format(float(j0(2 * np.pi * cyc)), '.3f')} | "
                     f"{pilot_blocks(rs) if rs.value('phy.scheme') == 'floras' else '—'} | "
                     f"{acc.mean():.1f} [{acc.min():.1f}, {acc.max():.1f}] | {eps:.4g} |")
    path = Path(out_dir) / f"{STEM}.table.md"
    atomic_write_text(path, "\n".join(lines) + "\n")
    return path
