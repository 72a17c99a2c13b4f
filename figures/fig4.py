"""Fig. 4 of the source: FLORAS against truncated channel inversion (model §8).

Four panels: (a) training loss and (b) test accuracy with IID clients, (c) and (d) the same
non-IID; one curve per scheme × SNR (colour: scheme, line style: SNR). Reads the results of
the sweep ``scenarios/fig4.toml`` only.
"""

from __future__ import annotations

from pathlib import Path

import math

from .common import SNR_DEFINITION, case_title, epsilon_caption, learning_curves, load_finished, run_facts, save_figure

SWEEP = "fig4"
STEM = "fig4_floras_vs_channel_inversion"

SCHEME_NAMES = {"floras": "FLORAS", "channel-inversion": "channel inversion", "ideal": "ideal (noise-free)"}
SCHEME_COLORS = {"floras": "tab:blue", "channel-inversion": "tab:red", "ideal": "tab:gray"}


def _snr_styles(res) -> dict:
    snrs = sorted({float(rs.value("phy.snr_db")) for rs in res.runsets}, reverse=True)
    styles = ["-", "--", ":", "-."]
    return {s: styles[i % len(styles)] for i, s in enumerate(snrs)}


def make(results_dir: Path, out_dir: Path, *, res=None, stem: str = STEM,
         title: str = "FLORAS vs truncated channel inversion (cf. source Fig. 4)", show_lr: bool = False) -> list[Path]:
    """Draw the figure from ``results_dir`` (or the already loaded and regrouped ``res``);
    ``show_lr`` names each curve's learning rate (the tuned-η robustness row, :mod:`figures.fig4_tuned`)."""
    res = res if res is not None else load_finished(results_dir)
    ls = _snr_styles(res)

    def label(rs):
        scheme = rs.value("phy.scheme")
        lr = f", η = {float(rs.value('training.lr')):g}" if show_lr else ""
        return f"{SCHEME_NAMES.get(scheme, scheme)}, SNR {float(rs.value('phy.snr_db')):g} dB{lr}"

    def style(rs):
        return {"color": SCHEME_COLORS.get(rs.value("phy.scheme")), "linestyle": ls[float(rs.value("phy.snr_db"))], "linewidth": 1.4}

    fig = learning_curves(res, curve_label=label, curve_style=style, row_title=case_title,
                          title=title)
    rs0 = res.runsets[0]
    resource = rs0.value("phy.resource", "equal")
    head = (
        f"FLORAS vs truncated channel inversion (threshold |h|² ≥ {rs0.value('phy.g_th', 0.01):g}), Rayleigh block fading; "
        f"FLORAS CSIT: {rs0.value('phy.floras.csit', 'none')}. {SNR_DEFINITION}; resource convention: {resource}. {run_facts(res, loss_median=True)} "
    )
    eps = [float(rs.final("epsilon")[0]) for rs in res.runsets if "epsilon" in rs.metrics]
    if eps and all(math.isinf(e) for e in eps):
        gammas = sorted({int(rs.value("phy.floras.N")) - int(rs.value("training.clients_per_round"))
                         for rs in res.runsets if rs.value("phy.scheme") == "floras"})
        note = (f"Privacy: ε = ∞ for every curve (channel inversion adds no privacy noise; FLORAS here has "
                f"γ = N − K = {', '.join(map(str, gammas))}), threat model T1.")
        return save_figure(fig, out_dir, stem, head + note)
    short, full = epsilon_caption(res, lambda rs: f"{case_title(rs.label)}, {label(rs)}")
    return save_figure(fig, out_dir, stem, head + short, full_caption=head + full)
