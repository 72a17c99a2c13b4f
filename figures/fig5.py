"""Fig. 5 of the source: the cost of privacy, γ = N − K ∈ {0, 1, 5, 10} at 20 dB (model §8).

Four panels: (a) training loss and (b) test accuracy with IID clients, (c) and (d) the same
non-IID; one curve per γ, with the final ε of that configuration in the legend. Reads the
results of the sweep ``scenarios/fig5.toml`` only.
"""

from __future__ import annotations

import math
from pathlib import Path

from .common import SNR_DEFINITION, case_title, epsilon_caption, learning_curves, load_finished, run_facts, save_figure

SWEEP = "fig5"
STEM = "fig5_privacy_cost"


def gamma(rs) -> int:
    return int(rs.value("phy.floras.N")) - int(rs.value("training.clients_per_round"))


def final_epsilon(rs) -> float:
    return float(rs.final("epsilon")[0]) if "epsilon" in rs.metrics else math.nan


def format_epsilon(eps: float, alpha: float = math.nan) -> str:
    if math.isnan(eps):
        return "ε n/a"
    if math.isinf(eps):
        return "ε = ∞"
    return f"ε = {eps:.3g}" + ("" if math.isnan(alpha) else f" (α = {alpha:.4g})")


def final_alpha(rs) -> float:
    from scenarios.store import privacy_statement

    return privacy_statement(rs.configs[0])["alpha"] if rs.configs else math.nan


def make(results_dir: Path, out_dir: Path) -> list[Path]:
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import colormaps

    res = load_finished(results_dir)
    gammas = sorted({gamma(rs) for rs in res.runsets})
    cmap = colormaps["viridis"]
    colors = {g: cmap(i / max(1, len(gammas) - 1) * 0.9) for i, g in enumerate(gammas)}

    def label(rs):
        return f"γ = {gamma(rs)} (N = {rs.value('phy.floras.N')}), {format_epsilon(final_epsilon(rs), final_alpha(rs))}"

    def style(rs):
        return {"color": colors[gamma(rs)], "linewidth": 1.4}

    rs0 = res.runsets[0]
    fig = learning_curves(res, curve_label=label, curve_style=style, row_title=case_title,
                          title=f"FLORAS, K = {rs0.value('training.clients_per_round')}, SNR {float(rs0.value('phy.snr_db')):g} dB: cost of privacy (cf. source Fig. 5)")
    short, full = epsilon_caption(res, lambda rs: f"{case_title(rs.label)}, γ = {gamma(rs)}")
    head = (
        f"FLORAS with γ = N − K inactive sequences, K = {rs0.value('training.clients_per_round')}, SNR {float(rs0.value('phy.snr_db')):g} dB. "
        f"{SNR_DEFINITION}. {run_facts(res, loss_median=True)} Legend: ε after the last round and the Rényi order α that attains it. "
    )
    return save_figure(fig, out_dir, STEM, head + short, full_caption=head + full)
