"""Checks of the channel keys of :class:`phy.config.PhyConfig` (model §5.1, §5.2), part of its one validation.

The cell, coherence, Rician, timing and antenna keys: each value's range, the path-loss model's validity,
and whether the configured scheme supports what is asked (``SchemeSpec.channel``, ``SchemeSpec.rx_antennas``);
every failure a one-line :class:`ValueError` naming the key.
"""

from __future__ import annotations

import math

from .checks import check_choice, check_int_at_least

__all__ = ["CHANNELS", "check_channel", "check_antennas", "check_csi_error", "check_inversion_csit"]

CHANNELS = ("none", "block-fading", "cell", "cell-coherence")  # SchemeSpec.channel, in increasing support


def _number(name: str, value, low: float | None = None, high: float | None = None, *, strict_low: bool = False) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ValueError(f"{name} must be a finite number (got {value!r})")
    if low is not None and (value <= low if strict_low else value < low):
        raise ValueError(f"{name} must be {'>' if strict_low else '≥'} {low:g} (got {value!r})")
    if high is not None and value > high:
        raise ValueError(f"{name} must be ≤ {high:g} (got {value!r})")
    return float(value)


def check_channel(cfg: "PhyConfig", spec) -> None:
    """The cell and coherence keys (model §5.1): ranges, the path-loss model's validity, the scheme's support.

    Keys that the configured model does not use (e.g. ``pathloss_exponent`` with a TR 38.901 model, or the
    cell keys with ``pathloss = "none"``) are checked for range and otherwise unused, like ``g_th`` for FLORAS.
    """
    from .cell import POWER_CONTROLS, SNR_REFERENCES
    from .channels import pathloss_model, pathloss_names
    from .coherence import CORRELATIONS

    check_choice("pathloss", cfg.pathloss, ("none", *pathloss_names()))
    r0 = _number("cell_min_distance", cfg.cell_min_distance, 0.0, strict_low=True)
    R = _number("cell_radius", cfg.cell_radius, 0.0, 1e5, strict_low=True)
    if R <= r0:
        raise ValueError(f"cell_radius must be > phy.cell_min_distance = {r0:g} m (got {cfg.cell_radius!r})")
    if not isinstance(cfg.redrop, bool):
        raise ValueError(f"redrop must be true or false (got {cfg.redrop!r})")
    check_choice("snr_reference", cfg.snr_reference, SNR_REFERENCES)
    check_choice("power_control", cfg.power_control, POWER_CONTROLS)
    _number("pc_target_db", cfg.pc_target_db, -100.0, 100.0)
    if cfg.shadowing_db is not None:
        _number("shadowing_db", cfg.shadowing_db, 0.0, 30.0)
    _number("carrier_ghz", cfg.carrier_ghz, 0.0, 100.0, strict_low=True)
    ut = _number("ut_height", cfg.ut_height, 0.0, 100.0, strict_low=True)
    if cfg.bs_height is not None and _number("bs_height", cfg.bs_height, 0.0, 1000.0, strict_low=True) <= ut:
        raise ValueError(f"bs_height must be > ut_height = {ut:g} m (got {cfg.bs_height!r})")
    _number("pathloss_exponent", cfg.pathloss_exponent, 0.0, 10.0, strict_low=True)
    if cfg.has_cell and pathloss_model(cfg.pathloss).uses_heights:
        if r0 < 10.0 or R > 5000.0:
            raise ValueError(f"cell_radius ≤ 5000 m and cell_min_distance ≥ 10 m for TR 38.901 pathloss = {cfg.pathloss!r} "
                             f"(got {R:g} and {r0:g}; Table 7.4.1-1)")
        high = 30.0 if cfg.pathloss == "rma" else 100.0
        if not 0.5 <= float(cfg.carrier_ghz) <= high:
            raise ValueError(f"carrier_ghz must be in [0.5, {high:g}] for pathloss = {cfg.pathloss!r} (got {cfg.carrier_ghz!r})")
    if cfg.coherence_symbols is not None:
        check_int_at_least("coherence_symbols", cfg.coherence_symbols, 1)
    check_choice("fading_correlation", cfg.fading_correlation, CORRELATIONS)
    _number("doppler", cfg.doppler, 0.0, 0.5)
    from .channels.tdl import TDL_MODELS

    check_choice("tdl_model", cfg.tdl_model, TDL_MODELS)
    _number("delay_spread", cfg.delay_spread, 0.0, 1e-5, strict_low=True)
    _number("subcarrier_spacing", cfg.subcarrier_spacing, 0.0, 1e7, strict_low=True)
    if cfg.fading_correlation == "tdl" and cfg.coherence_symbols is None:
        raise ValueError("fading_correlation = 'tdl' spreads the update over OFDM subcarriers, one per coherence block: "
                         "set phy.coherence_symbols (n_c, the update's slots per subcarrier)")
    check_int_at_least("tdl_time_blocks", cfg.tdl_time_blocks, 1)
    if cfg.tdl_time_blocks > 1:
        from .coherence import MAX_EXACT_BLOCKS

        if cfg.fading_correlation != "tdl":
            raise ValueError(f"tdl_time_blocks = {cfg.tdl_time_blocks}: blocks in time on each OFDM subcarrier need "
                             f"fading_correlation = 'tdl' (got {cfg.fading_correlation!r}); for aging without "
                             "subcarriers use 'jakes-exact'")
        if cfg.tdl_time_blocks > MAX_EXACT_BLOCKS:
            raise ValueError(f"tdl_time_blocks must be ≤ {MAX_EXACT_BLOCKS} (the Clarke factor is B_t×B_t; got "
                             f"{cfg.tdl_time_blocks}): raise coherence_symbols instead")
    if cfg.fading_correlation == "tdl" and cfg.rician_k != 0.0:
        raise ValueError("rician_k: the TDL profiles carry their own line of sight (A, B, C NLoS, every tap Rayleigh; "
                         "D, E the LoS K-factor of TR 38.901); remove phy.rician_k with fading_correlation = 'tdl' "
                         "(tdl_model = 'D' or 'E' for a LoS channel)")
    _number("rician_k", cfg.rician_k, 0.0, 1e4)
    check_los_doppler(cfg)
    if _number("timing_offset", cfg.timing_offset, 0.0) >= 1.0:
        raise ValueError(f"timing_offset must be < 1 chip (got {cfg.timing_offset!r})")
    if cfg.timing_offset != 0.0 and spec.channel != "none" and not spec.chip_timing:
        raise ValueError(f"timing_offset: scheme {spec.name!r} has no chip-timing model (model §5.1); remove phy.timing_offset")
    if cfg.timing_offset != 0.0 and spec.name in ("channel-inversion", "analog-gaussian"):
        who = "channel inversion" if spec.name == "channel-inversion" else "analog Gaussian"
        for key, off, what in (("coherence_symbols", None, "coherence blocks"), ("csi_error", 0.0, "imperfect CSI")):
            if getattr(cfg, key) != off:
                raise ValueError(f"timing_offset: {who}'s chip-timing offsets with {what} are not modelled; "
                                 f"remove phy.{key} or phy.timing_offset")
    check_antennas(cfg, spec)
    check_csi_error(cfg, spec)
    check_inversion_csit(cfg, spec)
    level = CHANNELS.index(spec.channel)
    if spec.channel != "none":
        if (cfg.has_cell or cfg.los_k != 0.0) and level < CHANNELS.index("cell"):
            key = "pathloss" if cfg.has_cell else ("tdl_model" if cfg.rician_k == 0.0 else "rician_k")
            raise ValueError(f"{key}: scheme {spec.name!r} models the Rayleigh block-fading link of model §5 only; "
                             f"use pathloss = 'none', rician_k = 0 and an NLoS tdl_model with it")
        if cfg.coherence_symbols is not None and level < CHANNELS.index("cell-coherence"):
            raise ValueError(f"coherence_symbols: scheme {spec.name!r} keeps one fading block per update (its per-block "
                             "admission is not modelled); remove phy.coherence_symbols for it")


def check_los_doppler(cfg: "PhyConfig") -> None:
    """``los_doppler`` (model §5.1): None, or f_S/f_D in [−1, 1] where a line of sight rotates over blocks in time."""
    if cfg.los_doppler is None:
        return
    _number("los_doppler", cfg.los_doppler, -1.0, 1.0)
    if cfg.los_k == 0.0:
        raise ValueError("los_doppler: the link has no line of sight (rician_k = 0 and no TDL-D/E profile); remove "
                         "phy.los_doppler or set rician_k > 0 (or tdl_model = 'D' or 'E' with fading_correlation = 'tdl')")
    if not cfg.blocks_in_time:
        raise ValueError("los_doppler: the line of sight rotates only over blocks in time (coherence_symbols with "
                         "fading_correlation = 'jakes' or 'jakes-exact', or 'tdl' with tdl_time_blocks > 1); remove "
                         "phy.los_doppler or configure such blocks")


def check_antennas(cfg: "PhyConfig", spec) -> None:
    """``rx_antennas`` (model §5.2): an integer ≥ 1; N_r > 1 only for a scheme that models it; coherence blocks and
    chip-timing offsets only where the scheme models them with antennas (``SchemeSpec.antennas_with``); Rician fading
    with the line of sight steered over a half-wavelength linear array (model §5.2)."""
    check_int_at_least("rx_antennas", cfg.rx_antennas, 1)
    if cfg.rx_antennas == 1 or spec.channel == "none":
        return
    if not spec.rx_antennas:
        raise ValueError(f"rx_antennas: scheme {spec.name!r} models a single-antenna base station (its per-client rate "
                         f"with several antennas is not modelled); use rx_antennas = 1 with it")
    for key, off, what in (("coherence_symbols", None, "several coherence blocks"), ("timing_offset", 0.0, "chip-timing offsets")):
        if getattr(cfg, key) != off and key not in spec.antennas_with:
            which = ", ".join(s.name for s in _antenna_schemes(key)) or "none"
            raise ValueError(f"{key}: {what} with rx_antennas = {cfg.rx_antennas} is not modelled for scheme "
                             f"{spec.name!r} (modelled for: {which}); remove phy.{key} or use rx_antennas = 1")


def _antenna_schemes(key: str) -> list:
    """The registered schemes that model ``key`` with N_r > 1 antennas (for the refusal's text)."""
    from .schemes import scheme_names, scheme_spec

    return [scheme_spec(n) for n in scheme_names() if key in scheme_spec(n).antennas_with]


def check_csi_error(cfg: "PhyConfig", spec) -> None:
    """``csi_error`` (model §5.1): a finite number ≥ 0; > 0 only for channel inversion, analog Gaussian (whose
    clients' shares and noise are both scaled by Re(h_k/ĥ_k): its accountant takes the revealed-strength law of
    :mod:`phy.csi_law`), with any number of receive antennas (the combiner of the estimates, model §5.2), and FLORAS
    with phase CSIT (the pre-rotation by the estimate's phase; one receive antenna, a pilot and an estimate per block).
    """
    if isinstance(cfg.csi_error, bool) or not isinstance(cfg.csi_error, (int, float)) or not math.isfinite(cfg.csi_error) \
            or cfg.csi_error < 0:
        raise ValueError(f"csi_error must be a finite number ≥ 0 (relative estimation-error variance σ_e²; 0: perfect "
                         f"CSI) (got {cfg.csi_error!r})")
    if cfg.csi_error == 0.0:
        return
    if spec.name == "floras":
        if cfg.of("floras").csit != "phase":
            raise ValueError("csi_error: FLORAS without CSIT (floras.csit = 'none') uses no channel estimate; set "
                             "floras.csit = 'phase' (pre-rotation by the estimate's phase) or csi_error = 0")
        if cfg.coherence_symbols is not None and cfg.of("floras").pilots != "per-block":
            raise ValueError("csi_error: FLORAS's phase CSIT from an estimate is modelled with a pilot (and an estimate) "
                             "per coherence block; set floras.pilots = 'per-block', remove phy.coherence_symbols, or set "
                             "csi_error = 0")
    elif spec.name not in ("channel-inversion", "analog-gaussian"):
        raise ValueError(f"csi_error: imperfect CSI is modelled for schemes 'channel-inversion', 'analog-gaussian' and "
                         f"'floras' (phase CSIT) only (got scheme {spec.name!r}); remove phy.csi_error or set it to 0")


def check_inversion_csit(cfg: "PhyConfig", spec=None) -> None:
    """``inversion_csit`` (model §5.1): "stale" (block 0's CSIT over the update), "per-block" (re-acquired per
    coherence block) or "per-subcarrier" (each TDL subcarrier's first time block, kept over its B_t time blocks);
    the last two with ``csi_error`` for channel inversion and analog Gaussian (an error per measurement,
    :mod:`phy.csit_blocks`)."""
    from .csit_blocks import CSIT_MODES

    check_choice("inversion_csit", cfg.inversion_csit, CSIT_MODES)
    if spec is not None and cfg.inversion_csit != "stale" and spec.name not in ("channel-inversion", "analog-gaussian"):
        raise ValueError(f"inversion_csit: {cfg.inversion_csit!r} applies to schemes 'channel-inversion' and "
                         f"'analog-gaussian' only (got scheme {spec.name!r}); remove phy.inversion_csit")
    if cfg.inversion_csit == "per-subcarrier" and cfg.fading_correlation != "tdl":
        raise ValueError(f"inversion_csit: 'per-subcarrier' needs OFDM subcarriers, fading_correlation = 'tdl' (got "
                         f"{cfg.fading_correlation!r}); use 'per-block' or 'stale' for blocks in time")
