"""The matched comparison in a cell at low SNR across the TR 38.901 scenarios (``scenarios/cell_snr.toml``; model
§5.1, §10), from stored results only: final test accuracy per path-loss scenario and case (mean over seeds, min–max
band), with its ``.table.md`` (accuracy and mean admitted clients), as :mod:`figures.cell` draws against the radius.

The same figure serves every sweep whose grid is ``phy.pathloss`` (the registry also draws it for
``scenarios/cell_noniid_snr.toml``, where ``none`` is the no-cell reference): its stem is
``<sweep>_accuracy_vs_scenario``, so no sweep overwrites another's."""

from __future__ import annotations

from pathlib import Path

from .cell_accuracy import draw_accuracy, write_cell_table
from .common import SNR_DEFINITION, load_finished, save_figure
from .matched import facts, finish_single_panel, privacy_caption, read_matched

SWEEP = "cell_snr"
STEM = "cell_snr_accuracy_vs_scenario"
KEY = "phy.pathloss"
ORDER = ["umi", "uma", "rma"]  # TR 38.901 §7.4.1: street canyon, macro, rural
NAMES = {"umi": "UMi street canyon", "uma": "UMa", "rma": "RMa", "none": "no cell"}


def make(results_dir: Path, out_dir: Path) -> list[Path]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    res = load_finished(results_dir)
    record = read_matched(results_dir)
    fig, ax = plt.subplots(figsize=(7.2, 4.8))
    stem = f"{Path(results_dir).name}_accuracy_vs_scenario"   # STEM for SWEEP itself
    found = {str(rs.value(KEY)) for rs in res.runsets}
    order = [v for v in ["none", *ORDER] if v in found] + sorted(found - {"none", *ORDER})
    xs = draw_accuracy(ax, res, record, KEY, order=order)
    ax.set_xticks(xs, [NAMES.get(order[int(x)], order[int(x)]) for x in xs])
    ax.set_xlim(min(xs) - 0.4, max(xs) + 0.4)
    cfg = res.config().get("config", {})
    part, phy = cfg.get("partition", {}), cfg.get("phy", {})
    kind = "" if part.get("kind") == "iid" else f", partition {part.get('kind')}"
    finish_single_panel(fig, ax, xlabel="path-loss scenario (TR 38.901)",
                        title=f"Accuracy in a {phy.get('cell_radius'):g} m cell at {phy.get('snr_db'):g} dB{kind}")
    caption = (f"Final test accuracy per TR 38.901 scenario (R = {phy.get('cell_radius'):g} m, r₀ = "
               f"{phy.get('cell_min_distance')} m, one fixed drop per seed), SNR {phy.get('snr_db')} dB referred to the "
               f"{phy.get('snr_reference')} (model §5.1), partition {part.get('kind')}; dashed: channel inversion (no "
               f"privacy noise, ε = ∞){'; no cell: every client at the reference SNR' if 'none' in found else ''}. {privacy_caption(res, record)} {SNR_DEFINITION}. {facts(res)}")
    paths = save_figure(fig, out_dir, stem, caption)
    paths.append(write_cell_table(res, record, out_dir, stem, KEY, "", order=order))
    return paths
