"""Every figure that ``floras figures`` regenerates, and the sweep whose results it reads."""

from __future__ import annotations

import importlib

#: (module under ``figures``, sweep name = results sub-directory; a name ending in ``*`` stands for every sweep
#: directory it matches, and the module's ``make`` receives their list)
FIGURES = (
    ("fig4", "fig4"),
    ("fig4_tuned", "fig4_tuned"),
    ("fig5", "fig5"),
    ("snr_sweep", "snr_sweep"),
    ("privacy_utility", "privacy_sweep"),
    ("matched", "matched"),
    ("matched_xdev", "matched_xdev"),
    ("matched_generic", "matched_generic"),
    ("matched_tightest", "matched_tightest"),
    ("matched_xdev_tightest", "matched_xdev_tightest"),
    ("matched_budget", "matched_budget"),
    ("matched_snr", "matched_snr"),
    ("matched_snr_tightest", "matched_snr_tightest"),
    ("matched_budget_tightest", "matched_budget_tightest"),
    ("matched_receiver", "matched_receiver"),
    ("prifedsync", "prifedsync"),
    ("channel_uses_vs_k", "matched_population"),
    ("channel_uses_vs_k", "matched_population_eps8"),  # the slice that ran first: its own file, see the module
    ("population_epsilon", "matched_population*"),  # the whole sweep and its slices merged, see the module
    ("cell", "cell"),
    ("cell_snr", "cell_snr"),
    ("cell_snr", "cell_noniid_snr"),  # its own stem, see the module
    ("cell_snr", "cell_edge_snr"),  # its own stem, see the module
    ("cell_snr", "cell_snr_m10"),  # its own stem, see the module
    ("cell_snr", "cell_edge_snr_m10"),  # its own stem, see the module
    ("cell_exponent", "cell_exponent"),
    ("cell_truncation", "cell_truncation"),
    ("cell_placement", "cell_placement"),
    ("cell_placement", "cell_placement_rings"),  # its own stem, see the module
    ("cell_antennas", "cell_antennas"),
    ("cell_antennas_tightest", "cell_antennas_tightest"),
    ("cell_antennas_tightest", "cell_antennas_tightest_snr"),  # its own stem, see the module
    ("cell_antennas_tightest", "cell_antennas_tightest_radius"),  # its own stem, see the module
    ("cell_aging", "cell_aging"),
    ("cell_noniid", "cell_noniid"),
    ("cell_timing", "cell_timing"),
    ("cell_csi", "cell_csi"),
    ("cell_csi", "cell_csi_umi"),  # its own stem, see the module
    ("cell_csi", "cell_csi_antennas"),  # its own stem, see the module
    ("cell_csi", "cell_aging_csi"),  # its own stem, see the module
    ("cell_csi", "cell_aging_antennas"),  # its own stem, see the module
    ("cell_aging_antennas", "cell_aging_antennas*"),  # both antenna-aging sweeps merged, see the module
    ("cell_tdl", "cell_tdl"),
)


def figure_module(name: str):
    return importlib.import_module(f"figures.{name}")
