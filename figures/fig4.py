"""Fig. 4 of the source: FLORAS against truncated channel inversion (SPEC §8).

Four panels: (a) training loss and (b) test accuracy with IID clients, (c) and (d) the same
non-IID; one curve per scheme × SNR (colour: scheme, line style: SNR). Reads the results of
the sweep ``scenarios/fig4.toml`` only.
"""

from __future__ import annotations

from pathlib import Path

from .common import SNR_DEFINITION, case_title, learning_curves, load_results, run_facts, save_figure

SWEEP = "fig4"
STEM = "fig4_floras_vs_channel_inversion"

SCHEME_NAMES = {"floras": "FLORAS", "channel-inversion": "channel inversion", "ideal": "ideal (noise-free)"}
SCHEME_COLORS = {"floras": "tab:blue", "channel-inversion": "tab:red", "ideal": "tab:gray"}


def _snr_styles(res) -> dict:
    snrs = sorted({float(rs.value("phy.snr_db")) for rs in res.runsets}, reverse=True)
    styles = ["-", "--", ":", "-."]
    return {s: styles[i % len(styles)] for i, s in enumerate(snrs)}


def make(results_dir: Path, out_dir: Path) -> list[Path]:
    res = load_results(results_dir)
    if not res.runsets:
        raise ValueError(f"results directory {results_dir} has no finished runs")
    ls = _snr_styles(res)

    def label(rs):
        scheme = rs.value("phy.scheme")
        return f"{SCHEME_NAMES.get(scheme, scheme)}, SNR {float(rs.value('phy.snr_db')):g} dB"

    def style(rs):
        return {"color": SCHEME_COLORS.get(rs.value("phy.scheme")), "linestyle": ls[float(rs.value("phy.snr_db"))], "linewidth": 1.4}

    fig = learning_curves(res, curve_label=label, curve_style=style, row_title=case_title,
                          title="FLORAS vs truncated channel inversion (cf. source Fig. 4)")
    rs0 = res.runsets[0]
    resource = rs0.value("phy.resource", "equal")
    caption = (
        f"FLORAS vs truncated channel inversion (threshold |h|² ≥ {rs0.value('phy.g_th', 0.01):g}), Rayleigh block fading. "
        f"{SNR_DEFINITION}; resource convention: {resource}. {run_facts(res)} "
        "Channel inversion adds no privacy noise; FLORAS's privacy follows from γ = N − K (see the reproduction report)."
    )
    return save_figure(fig, out_dir, STEM, caption)
