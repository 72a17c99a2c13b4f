"""The matched comparison in a cell at low SNR across the TR 38.901 scenarios (``scenarios/cell_snr.toml``; model
§5.1, §10), from stored results only: final test accuracy per path-loss scenario and case (mean over seeds, min–max
band), with its ``.table.md`` (accuracy and mean admitted clients), as :mod:`figures.cell` draws against the radius.

The same figure serves every sweep whose grid is ``phy.pathloss`` (the registry also draws it for
``scenarios/cell_noniid_snr.toml``, where ``none`` is the no-cell reference): its stem is
``<sweep>_accuracy_vs_scenario``, so no sweep overwrites another's."""

from __future__ import annotations

from pathlib import Path

from .cell_accuracy import accuracy_figure
from .common import SNR_DEFINITION
from .matched import facts, privacy_caption

SWEEP = "cell_snr"
STEM = "cell_snr_accuracy_vs_scenario"
KEY = "phy.pathloss"
ORDER = ["umi", "uma", "rma"]  # TR 38.901 §7.4.1: street canyon, macro, rural
NAMES = {"umi": "UMi street canyon", "uma": "UMa", "rma": "RMa", "none": "no cell"}


def _order(res) -> list:
    """The no-cell reference first, then the standard's order, then any other scenario by name."""
    found = {str(rs.value(KEY)) for rs in res.runsets}
    return [v for v in ["none", *ORDER] if v in found] + sorted(found - {"none", *ORDER})


def _title(res, record, cfg) -> str:
    part, phy = cfg.get("partition", {}), cfg.get("phy", {})
    kind = "" if part.get("kind") == "iid" else f", partition {part.get('kind')}"
    return f"Accuracy in a {phy.get('cell_radius'):g} m cell at {phy.get('snr_db'):g} dB{kind}"


def _caption(res, record, cfg) -> str:
    part, phy = cfg.get("partition", {}), cfg.get("phy", {})
    nocell = "; no cell: every client at the reference SNR" if "none" in _order(res) else ""
    return (f"Final test accuracy per TR 38.901 scenario (R = {phy.get('cell_radius'):g} m, r₀ = "
            f"{phy.get('cell_min_distance')} m, one fixed drop per seed), SNR {phy.get('snr_db')} dB referred to the "
            f"{phy.get('snr_reference')} (model §5.1), partition {part.get('kind')}; dashed: channel inversion (no "
            f"privacy noise, ε = ∞){nocell}. {privacy_caption(res, record)} {SNR_DEFINITION}. {facts(res)}")


def make(results_dir: Path, out_dir: Path) -> list[Path]:
    return accuracy_figure(results_dir, out_dir, stem=f"{Path(results_dir).name}_accuracy_vs_scenario",  # STEM for SWEEP
                           key=KEY, xlabel="path-loss scenario (TR 38.901)", title=_title, caption=_caption,
                           order=_order, names=NAMES)
