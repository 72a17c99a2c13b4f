"""FLORAS and analog Gaussian against the receive antennas at ε = 8 under the tightest accountant
(``scenarios/cell_antennas_tightest.toml``; model §5.2, §9.5 "Several antennas"), from stored results only: final
test accuracy against N_r, one curve per scheme and receiver (the cases ``floras-none-nr2``, ``-nr4`` join
``floras-none``, ``floras-none-capped-nr2`` joins ``floras-none-capped``; each case holds one N_r), and its
``.table.md``. The same module draws ``scenarios/cell_antennas_tightest_snr.toml`` (its directory's name picks it):
accuracy against the SNR, one curve per case (scheme, receiver and N_r), stem :data:`SNR_STEM`; and
``scenarios/cell_antennas_tightest_radius.toml``: accuracy against the cell radius at 0 dB, stem :data:`RADIUS_STEM`."""

from __future__ import annotations

import re
from pathlib import Path

from .cell_accuracy import accuracy_figure
from .common import SNR_DEFINITION
from .matched import facts, privacy_caption

SWEEP = "cell_antennas_tightest"
STEM = "cell_accuracy_vs_antennas_tightest"
KEY = "phy.rx_antennas"
SNR_SWEEP = "cell_antennas_tightest_snr"
SNR_STEM = "cell_accuracy_vs_snr_antennas_tightest"
RADIUS_SWEEP = "cell_antennas_tightest_radius"
RADIUS_STEM = "cell_accuracy_vs_radius_antennas_tightest"


def curve_of(label: str) -> str:
    """The curve a case belongs to: its label without the ``-nr<N_r>`` suffix (``floras-none-nr4`` → ``floras-none``)."""
    return re.sub(r"-nr\d+$", "", label)


def _caption(res, record, cfg) -> str:
    phy = cfg.get("phy", {})
    return (f"Final test accuracy against the base station's receive antennas N_r at the target ε (model §5.2: FLORAS "
            f"despreads after a maximum-ratio combiner, its ε from the PLD over the combined noise law, model §9.5 "
            f"'Several antennas', covers the combined aggregate only; analog Gaussian counts only its clients' noise "
            f"for N_r > 1), cell {phy.get('pathloss')} R = {phy.get('cell_radius')} m, SNR {phy.get('snr_db')} dB "
            f"referred to the {phy.get('snr_reference')}; the capped FLORAS receiver weighs a round by "
            f"min(4, V_ref/V̂), V_ref = 1/E[1/V] of the N_r-antenna law (model §6.4, 'Several antennas'). "
            f"{privacy_caption(res, record)} {SNR_DEFINITION}. {facts(res)}")


def _snr_caption(res, record, cfg) -> str:
    phy = cfg.get("phy", {})
    return (f"Final test accuracy against the SNR referred to the {phy.get('snr_reference')} (cell {phy.get('pathloss')} "
            f"R = {phy.get('cell_radius')} m), one curve per scheme, receiver and number of receive antennas N_r, each "
            f"at its η tuned at 20 dB (tuned again at 0 dB, capped FLORAS chose the same η); FLORAS's ε (PLD over the "
            f"maximum-ratio noise law, model §9.5 'Several antennas') does not depend on the SNR, analog Gaussian's "
            f"counts its receiver noise at "
            f"N_r = 1 only (model §5.2). The 20 dB points are {STEM}'s. "
            f"{privacy_caption(res, record)} {SNR_DEFINITION}. {facts(res)}")


def _radius_caption(res, record, cfg) -> str:
    phy = cfg.get("phy", {})
    return (f"Final test accuracy against the cell radius (cell {phy.get('pathloss')}, SNR {phy.get('snr_db')} dB "
            f"referred to the {phy.get('snr_reference')}: the radius changes the spread of the drop, not its median), "
            f"one curve per scheme, receiver and number of receive antennas N_r, each at its η tuned at 20 dB and "
            f"250 m (not retuned); the 250 m points are {SNR_STEM}'s. FLORAS's ε (PLD over the maximum-ratio noise law, "
            f"model §9.5 'Several antennas') does not depend on the cell; analog Gaussian's counts its receiver noise at "
            f"N_r = 1 only (model §5.2). {privacy_caption(res, record)} {SNR_DEFINITION}. {facts(res)}")


def make(results_dir: Path, out_dir: Path) -> list[Path]:
    if Path(results_dir).name == RADIUS_SWEEP:
        return accuracy_figure(results_dir, out_dir, stem=RADIUS_STEM, key="phy.cell_radius",
                               xlabel="cell radius R [m]",
                               title="Accuracy against the cell radius with receive antennas at 0 dB, tightest ε",
                               caption=_radius_caption, unit=" m")
    if Path(results_dir).name == SNR_SWEEP:
        return accuracy_figure(results_dir, out_dir, stem=SNR_STEM, key="phy.snr_db",
                               xlabel="SNR at the median distance [dB]",
                               title="Accuracy against the SNR with receive antennas, ε from the tightest accountant",
                               caption=_snr_caption, unit=" dB")
    return accuracy_figure(results_dir, out_dir, stem=STEM, key=KEY, xlabel="receive antennas N_r",
                           title="Accuracy against the receive antennas, ε from the tightest accountant",
                           caption=_caption, group=curve_of)
