"""Symbolic privacy targets: ``[privacy] target_epsilon = 8`` (or ``"inf"``) resolved when a scenario is loaded.

:func:`resolve_privacy_target` calibrates the scheme's noise key
(:func:`scenarios.config.calibration.calibrate_config`, model §10) and writes it into ``[phy]``;
both the target and the resolved key appear in the run's ``config.json``, with the calibration
record under ``privacy.calibrated``. Calibrations are cached per scenario less the keys that cannot
change ε.
"""

from __future__ import annotations

import dataclasses
import json
from functools import lru_cache

from scenarios.config.calibration import Calibration, calibrate_config, calibrated_key, with_phy
from scenarios.config.schemes import get_phy_key
from scenarios.config.scenario import build_scenario
from scenarios.config.tables import parse_target

__all__ = ["resolve_privacy_target", "clear_calibration_cache"]


@lru_cache(maxsize=512)
def _cached(config_json: str, target: float) -> Calibration:
    config = build_scenario(json.loads(config_json)).validate()
    return calibrate_config(config, target)


def clear_calibration_cache() -> None:
    """Forget the cached calibrations (after a wiring row's calibrated keys changed)."""
    _cached.cache_clear()


def _cache_key(config) -> str:
    """The scenario without the keys that cannot change ε (seed, learning rate, SNR of digital schemes)."""
    data = config.to_dict()
    data["run"].pop("seed", None)
    data["training"].pop("lr", None)
    if config.phy.scheme != "analog-gaussian":  # its guaranteed noise includes the receiver's (SNR, L, g_th)
        for key in ("snr_db", "chunk_size", "g_th", "rho_rule", "resource"):
            data["phy"].pop(key, None)  # channel keys that no other scheme's idealised ε reads
        for key in ("csit", "path", "sequences"):
            data["phy"].get("floras", {}).pop(key, None)
    data["privacy"].pop("target_epsilon", None)
    data["privacy"].pop("calibrated", None)
    return json.dumps(data, sort_keys=True)


def resolve_privacy_target(config):
    """Write the calibrated noise parameter of ``privacy.target_epsilon`` into ``[phy]`` (or return ``config``).

    The record (parameter, value, achieved ε, accountant, threat model) goes to
    ``privacy.calibrated`` so that ``config.json`` carries both the target and the resolved
    value. Raises :class:`InfeasibleTarget` when the target cannot be met.
    """
    target = parse_target(config.privacy.target_epsilon)
    if target is None:
        return config.validate()
    key = calibrated_key(config)
    try:
        config = config.validate()
    except ValueError as exc:
        # a searched key that must be set (e.g. a noise multiplier) gets any valid value: the calibration sets it
        if key is None or get_phy_key(config.phy, key.key) is not None or f"phy.{key.key} must be set" not in str(exc):
            raise
        config = with_phy(config, key.key, 1.0).validate()
    cal = _cached(_cache_key(config), target)
    if cal.parameter != "none":
        config = with_phy(config, cal.parameter, cal.value)
    record = {k: v for k, v in cal.to_dict().items() if k != "assumptions"}
    out = dataclasses.replace(config, privacy=dataclasses.replace(config.privacy, calibrated=record))
    return out.validate()
