"""Symbolic privacy targets: ``[privacy] target_epsilon = 8`` (or ``"inf"``) resolved when a scenario is loaded.

:func:`resolve_privacy_target` calibrates the scheme's noise key
(:func:`scenarios.config.calibration.calibrate_config`, model §10) and writes it into ``[phy]``;
both the target and the resolved key appear in the run's ``config.json``, with the calibration
record under ``privacy.calibrated``. Calibrations are cached per scenario less the keys that cannot
change ε. A sweep asks for its points' calibrations first (:func:`calibration_request`), computes them on its
workers (:func:`compute_calibration`, a pure function of the request) and hands them in (:func:`store_calibration`),
so that loading its points finds them here instead of calibrating one point after another. Computed answers are
also kept on disk between commands (:mod:`scenarios.store.calibrations`): a request stored there by an earlier
command run with the same code is read instead of calibrated.
"""

from __future__ import annotations

import dataclasses
import json

from scenarios.config.floras_timing import uses_law
from scenarios.config.calibration import Calibration, InfeasibleTarget, calibrate_config, calibrated_key, with_phy
from scenarios.config.schemes import get_phy_key
from scenarios.config.scenario import build_scenario
from scenarios.config.tables import parse_target

__all__ = ["CalibrationCrashed", "resolve_privacy_target", "clear_calibration_cache", "calibration_request", "request_of",
           "answered", "compute_calibration", "store_calibration"]

CACHE_SIZE = 512  # calibrations kept (the oldest is forgotten first)
#: FLORAS's receiver weight w·x̂ (phy.receiver_rules, model §6.4): a function of the release and the pilot outputs the
#: base station holds, so post-processing; plain, capped and inverse-variance FLORAS share one calibration
FLORAS_SERVER_RULE = ("receiver", "receiver_cap", "receiver_scope", "noise_estimate")
#: the cell's large-scale keys (model §5.1): no scheme's ε reads them (analog Gaussian's guaranteed noise is referred to
#: the SNR at the reference distance) but analog Gaussian's with imperfect CSI, whose request keeps them (and a fixed
#: drop's seed); FLORAS's ε_link does, which each run's report computes from the run's own
#: configuration (the cached record keeps no assumption lines). A cell becomes the canonical one, CANONICAL_CELL, so
#: that what needs a cell (labels placed by distance) still validates when the key is calibrated
CELL_KEYS = ("cell_radius", "cell_min_distance", "redrop", "carrier_ghz", "bs_height", "ut_height",
             "pathloss_exponent", "shadowing_db", "snr_reference", "power_control", "pc_target_db")
CANONICAL_CELL = "log-distance"


class CalibrationCrashed(ValueError):
    """A calibration that killed the worker processes that ran it (a dask ``KilledWorker``: most often memory). Kept
    as its answer so that loading the point raises this error instead of computing it again in the coordinating
    process, which it would kill too."""


_CACHE: dict[tuple[str, float], Calibration | InfeasibleTarget | CalibrationCrashed] = {}
#: the requests this process answered from the store on disk (``floras matched`` reports how many of its points')
READ_FROM_DISK: set[tuple[str, float]] = set()


def compute_calibration(request: tuple[str, float]) -> Calibration | InfeasibleTarget:
    """The calibration of a request ``(scenario JSON less the keys that cannot change ε, target ε)``, or the
    :class:`InfeasibleTarget` that says the target cannot be met (returned, not raised: it is an answer). Pure:
    any process computes the same value."""
    config_json, target = request
    config = build_scenario(json.loads(config_json)).validate()
    try:
        return calibrate_config(config, target)
    except InfeasibleTarget as exc:
        return exc


def store_calibration(request: tuple[str, float], answer: Calibration | InfeasibleTarget | CalibrationCrashed, *,
                      persist: bool = False) -> None:
    """Keep ``answer`` (from :func:`compute_calibration`, wherever it ran, or the crash that stopped it) for
    ``request``; ``persist``: a computed answer is also written to the store on disk (never a crash, nor a record
    read back from a finished run's configuration)."""
    if not isinstance(answer, (Calibration, InfeasibleTarget, CalibrationCrashed)):
        raise TypeError("a calibration answer is a Calibration, an InfeasibleTarget or a CalibrationCrashed (got "
                        f"{type(answer).__name__})")
    if persist and not isinstance(answer, CalibrationCrashed):
        from scenarios.store import calibrations

        calibrations.save(request, answer)
    _CACHE.pop(request, None)
    _CACHE[request] = answer
    while len(_CACHE) > CACHE_SIZE:
        del _CACHE[next(iter(_CACHE))]


def _from_disk(request: tuple[str, float]) -> bool:
    """Hand the in-process cache the answer an earlier command stored on disk, if any; True when it did."""
    from scenarios.store import calibrations

    answer = calibrations.load(request)
    if answer is not None:
        store_calibration(request, answer)
        READ_FROM_DISK.add(request)
    return answer is not None


def _cached(config_json: str, target: float) -> Calibration:
    request = (config_json, target)
    if request not in _CACHE and not _from_disk(request):
        store_calibration(request, compute_calibration(request), persist=True)
    answer = _CACHE[request]
    if isinstance(answer, (InfeasibleTarget, CalibrationCrashed)):  # an answer that is an error: raised afresh
        raise type(answer)(str(answer))
    return answer


def clear_calibration_cache() -> None:
    """Forget the cached calibrations (after a wiring row's calibrated keys changed)."""
    _CACHE.clear()


def _cache_key(config) -> str:
    """The scenario without the keys that cannot change ε (seed, learning rate, server momentum and FLORAS's receiver
    rule: the server's use of the released aggregate is post-processing, model §6.4; which cell, for every scheme but
    analog Gaussian with imperfect CSI, whose laws come from the seed's drop, model §5.1; the SNR of every scheme but
    analog Gaussian, whose guaranteed noise counts the receiver's; at client level the validation split, so that ``floras tune``'s validation runs share their case's calibration)."""
    data = config.to_dict()
    # analog Gaussian with imperfect CSI in a cell: the laws come from the cell, and a fixed drop's from the seed's
    drop_matters = config.phy.scheme == "analog-gaussian" and config.phy.csi_error != 0.0 and config.phy.has_cell
    # FLORAS's ε from the law given the pilots (with chip-timing offsets and N > K, or asked for): the law reads the
    # link (SNR, CSIT, sequences; the seed draws any but Walsh–Hadamard sequences; model §5.1 "FLORAS's ε with offsets")
    timing_law = uses_law(config)
    seeded = timing_law and config.phy.of("floras").sequences != "walsh-hadamard"
    if (not drop_matters or config.phy.redrop) and not seeded:
        data["run"].pop("seed", None)
    data["training"].pop("lr", None)
    data["training"].pop("server_momentum", None)
    if config.phy.scheme != "analog-gaussian":  # its guaranteed noise includes the receiver's (SNR, L, g_th)
        for key in ("chunk_size", "g_th", "rho_rule", "resource", "csi_error") + (() if timing_law else ("snr_db",)):
            data["phy"].pop(key, None)  # channel keys that no other scheme's idealised ε reads
        for key in (() if timing_law else ("csit", "path", "sequences")) + FLORAS_SERVER_RULE:
            data["phy"].get("floras", {}).pop(key, None)
    for key in CELL_KEYS if not drop_matters else ():
        data["phy"].pop(key, None)
    if config.phy.has_cell and not drop_matters:  # any cell calibrates as the canonical one; no cell stays without one
        data["phy"]["pathloss"] = CANONICAL_CELL
    data["privacy"].pop("target_epsilon", None)
    data["privacy"].pop("calibrated", None)
    if config.privacy.level == "client":  # which examples a client holds out cannot change a client-level ε
        data["data"].pop("evaluate_on", None)  # (at item level the held-out share sets D, the examples per client)
        data["data"].pop("validation_fraction", None)
    return json.dumps(data, sort_keys=True)


def _searchable(config):
    """The validated config, a searched key that must be set (e.g. a noise multiplier) given any valid value (the
    calibration sets it)."""
    key = calibrated_key(config)
    try:
        return config.validate()
    except ValueError as exc:
        if key is None or get_phy_key(config.phy, key.key) is not None or f"phy.{key.key} must be set" not in str(exc):
            raise
        return with_phy(config, key.key, 1.0).validate()


def request_of(config) -> tuple[str, float] | None:
    """The calibration request of ``config`` (built, not yet resolved), answered or not, or None without a finite
    target. Bad input raises the error loading would raise."""
    target = parse_target(config.privacy.target_epsilon)
    return None if target is None else (_cache_key(_searchable(config)), target)


def answered(request: tuple[str, float]) -> bool:
    """True when ``request``'s calibration is here: in this process, or stored on disk by an earlier command (then
    handed to this process's cache)."""
    return request in _CACHE or _from_disk(request)


def calibration_request(config) -> tuple[str, float] | None:
    """What resolving ``config`` (built, not yet resolved) would calibrate, or None: no finite target, or its
    calibration is already here (:func:`answered`). Bad input raises the error loading would raise."""
    request = request_of(config)
    return None if request is None or answered(request) else request


def resolve_privacy_target(config):
    """Write the calibrated noise parameter of ``privacy.target_epsilon`` into ``[phy]`` (or return ``config``).

    The record (parameter, value, achieved ε, accountant, threat model) goes to
    ``privacy.calibrated`` so that ``config.json`` carries both the target and the resolved
    value. Raises :class:`InfeasibleTarget` when the target cannot be met.
    """
    target = parse_target(config.privacy.target_epsilon)
    if target is None:
        return config.validate()
    config = _searchable(config)
    cal = _cached(_cache_key(config), target)
    if cal.parameter != "none":
        config = with_phy(config, cal.parameter, cal.value)
    record = {k: v for k, v in cal.to_dict().items() if k != "assumptions"}
    out = dataclasses.replace(config, privacy=dataclasses.replace(config.privacy, calibrated=record))
    return out.validate()
