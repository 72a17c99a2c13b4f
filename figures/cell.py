"""The matched comparison in a cell (``scenarios/cell.toml``; model §5.1, §10), from stored results only.

Two figures: ``cell_drop`` (the drop of every cell radius of the sweep, recomputed from a stored run's
configuration, :mod:`figures.cell_drop`) and ``cell_accuracy_vs_radius`` (final test accuracy against the
cell radius R per case, mean over seeds and min–max band, infeasible points × on the floor) with its
``.table.md`` (accuracy and mean admitted clients per R; :mod:`figures.cell_accuracy`).
"""

from __future__ import annotations

from pathlib import Path

from .cell_accuracy import accuracy_figure
from .cell_drop import cell_of, client_drop, draw_drop
from .common import SNR_DEFINITION, load_finished, save_figure
from .matched import facts, privacy_caption

SWEEP = "cell"
STEM = "cell_accuracy_vs_radius"
DROP_STEM = "cell_drop"
KEY = "phy.cell_radius"


def drop_records(res) -> list[dict]:
    """One stored run configuration per distinct cell (full power where there is one), lowest seed first."""
    chosen: dict = {}
    for rs in res.runsets:
        for seed, cfg in sorted(zip(rs.seeds, rs.configs), key=lambda sc: sc[0]):
            cell = cell_of(cfg)
            if not cell:
                continue
            full = (cfg.get("config", {}).get("phy", {}).get("power_control") == "full-power")
            old = chosen.get(cell)
            if old is None or (full and not old[0]) or (full == old[0] and seed < old[1]):
                chosen[cell] = (full, seed, cfg)
            break
    return [c for _, _, c in sorted(chosen.values(), key=lambda v: float(v[2]["config"]["phy"]["cell_radius"]))]


def make_drop(res, out_dir: Path, stem: str = DROP_STEM) -> list[Path]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    drops = [client_drop(cfg) for cfg in drop_records(res)]
    if not drops:
        return []
    n = len(drops)
    fig, axes = plt.subplots(1, n + 1, figsize=(3.6 * n + 0.9, 3.9), squeeze=False,
                             gridspec_kw={"width_ratios": [1.0] * n + [0.06]})
    sc = draw_drop(fig, axes[0][:n], drops)
    fig.colorbar(sc, cax=axes[0][n], label="β_eff [dB] (relative to the SNR reference)")
    handles, names = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, names, loc="upper center", ncol=len(names), fontsize=6.5, frameon=False, bbox_to_anchor=(0.5, 0.93))
    fig.suptitle("The cell drop: M clients uniform in the annulus, fixed across rounds", fontsize=11)
    d0 = drops[0]
    caption = (f"The drop of the M = {d0['M']} clients (model §5.1, seed {d0['seed']}): position of client c at "
               f"d_c = √(r₀² + u_c(R² − r₀²)), angle 2πv_c, from the keyed stream (seed, \"cell-drop\", c); colour "
               f"β_eff,c = β_c/β_ref [dB] with power control {d0['power_control']} (path loss {d0['pathloss']} "
               f"{'with LoS state (circles LoS, triangles NLoS) and' if d0['los'] is not None else 'with log-normal'} "
               f"shadowing), β_ref the path loss without shadowing at d_ref "
               f"({d0['snr_reference']}, dashed), where the SNR holds for a full-power client. Recomputed from each "
               f"run's stored configuration (phy table, run seed) and checked against its recorded reference "
               f"distance.{' Redrop: round 0 shown.' if d0['redrop'] else ''}")
    return save_figure(fig, out_dir, stem, caption)


def make(results_dir: Path, out_dir: Path) -> list[Path]:
    return make_radius(results_dir, out_dir, stem=STEM, drop=True, title="Accuracy in a cell against its radius")


def make_radius(results_dir: Path, out_dir: Path, *, stem: str, drop: bool, title: str) -> list[Path]:
    """Accuracy against the cell radius (figure ``stem`` and its table), and the drop figure when ``drop``."""
    res = load_finished(results_dir)
    paths = make_drop(res, out_dir) if drop else []
    return paths + accuracy_figure(results_dir, out_dir, stem=stem, key=KEY, unit=" m", log_x=True,
                                   xlabel="cell radius R [m]", title=title, caption=_radius_caption, res=res)


def _radius_caption(res, record, config) -> str:
    part, cfg = config.get("partition", {}), config.get("phy", {})
    return (f"Final test accuracy against the cell radius R ({cfg.get('pathloss')}, r₀ = {cfg.get('cell_min_distance')} m, "
            f"one fixed drop per seed), SNR {cfg.get('snr_db')} dB referred to the {cfg.get('snr_reference')} "
            f"(model §5.1), partition {part.get('kind')}; dashed: channel inversion (no privacy noise, ε = ∞). "
            f"{privacy_caption(res, record)} {SNR_DEFINITION}. {facts(res)}")
