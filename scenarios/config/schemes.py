"""Each scheme's wiring into runs, calibration, tables and figures (model §7, §9, §10): one row per scheme.

A scheme is declared in ``phy`` (:mod:`phy.schemes`: aggregator, parameters, link record) and its
privacy mechanism in ``privacy`` (:mod:`privacy.mechanisms`). Its :class:`SchemeWiring` row here says
how a scenario becomes that mechanism's run accountant, which ``[phy]`` key a target ε calibrates, the
threat model its ε covers (one wording: reports, calibration records, tables and figures all take
it from here), its label and its figure style. Every generic loop of ``scenarios`` — the ε column,
calibration, matched sweeps, ``floras link``'s table — iterates these rows. A scheme registered in
``phy`` without a row, or a row whose mechanism ``privacy`` does not know, is an error when a
scenario is validated, never a silent ε = ∞.

================= ========================================== ======================================
scheme            calibrated key (direction)                  ε = ∞ setting
================= ========================================== ======================================
floras            ``phy.C`` (largest, fixed N); ``phy.floras.N`` N = K (γ = 0)
                  (smallest integer N ≥ K, fixed C)
central-gaussian  ``phy.central-gaussian.noise_multiplier``   z = 0
analog-gaussian   ``phy.analog-gaussian.noise_multiplier``    z = 0
ddgauss           ``phy.ddgauss.local_std`` (at bit width B)   σ = 0
sqsgd             ``phy.sqsgd.epsilon0`` (largest)             none: ε₀ must be finite
ideal, channel-…  — (no privacy noise: ε = ∞ only)             the scheme itself
================= ========================================== ======================================
"""

from __future__ import annotations

import contextlib
import contextvars
import threading
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

__all__ = ["Calibrated", "SchemeWiring", "register_wiring", "unregister_wiring", "wiring", "wirings",
           "check_wiring", "scheme_accountant", "set_phy_key", "get_phy_key", "accountant_checks_only", "checks_only"]

_CHECKS_ONLY = contextvars.ContextVar("accountant_checks_only", default=False)


@contextlib.contextmanager
def accountant_checks_only():
    """Within it a scheme's accountant whose construction is long (a simulated law, :mod:`scenarios.config.analog_csi`)
    makes its checks and returns None instead of building itself: for :meth:`ScenarioConfig.validate`, whose d and D
    are placeholders, so that bad input is refused before long work without paying for an accountant it discards."""
    token = _CHECKS_ONLY.set(True)
    try:
        yield
    finally:
        _CHECKS_ONLY.reset(token)


def checks_only() -> bool:
    """True inside :func:`accountant_checks_only`."""
    return _CHECKS_ONLY.get()


@dataclass(frozen=True)
class Calibrated:
    """A ``[phy]`` key a target ε calibrates (model §10).

    ``key`` is dotted under ``[phy]`` (``"C"``, ``"floras.N"``, ``"ddgauss.local_std"``); ε grows with
    it when ``increasing``; the search runs in ``bracket`` (integers from the lower end when
    ``integer``; the lower end ``"K"`` means training.clients_per_round); ``noiseless`` is the
    ``(key, value)`` that removes the privacy noise (ε = ∞; ``"K"`` as above), or None when none exists.
    """

    key: str
    increasing: bool
    bracket: tuple[Any, Any]
    integer: bool = False
    noiseless: tuple[str, Any] | None = None


@dataclass(frozen=True)
class SchemeWiring:
    """One scheme's row. ``accountant(config, d=, D=)`` builds the run's accountant (None: the scheme adds no
    privacy noise, ε = ∞); ``calibrated`` maps the names ``privacy.calibrate_key`` takes to their keys (the
    first is the default); ``snr_independent``: its learning does not depend on ``phy.snr_db``;
    ``depends_on_d``: its ε depends on the model dimension d (``floras calibrate`` then needs ``--d``);
    ``scenario_defaults(phy, K=)`` fills the scheme's keys a command line left out (the ``[phy]`` mapping
    in, the completed mapping out); ``exposure(config, d=, rounds=)`` states, from the run's replayed draws, ε against
    an observer the accountant's threat model leaves out (a JSON-ready dict with a ``text``, or None where none
    applies; analog Gaussian: a scheduling base station that separates its antennas, model §5.2)."""

    scheme: str
    label: str
    threat_model: str
    mechanism: str | None = None
    accountant: Callable[..., Any] | None = field(default=None, compare=False)
    calibrated: Mapping[str, Calibrated] = field(default_factory=dict)
    snr_independent: bool = False
    depends_on_d: bool = False
    scenario_defaults: Callable[..., dict] | None = field(default=None, compare=False)
    exposure: Callable[..., dict | None] | None = field(default=None, compare=False)
    style: Mapping[str, Any] = field(default_factory=dict)


_ROWS: dict[str, SchemeWiring] = {}
_LOADED = False
_LOCK = threading.Lock()
BUILTIN_MODULE = "scenarios.config.builtin_schemes"


def _load() -> None:
    """Import the built-in rows once (thread-safe: sweep workers look rows up from threads)."""
    global _LOADED
    if _LOADED:
        return
    with _LOCK:
        if not _LOADED:
            import importlib

            importlib.import_module(BUILTIN_MODULE)
            _LOADED = True


def register_wiring(row: SchemeWiring, *, replace: bool = False) -> SchemeWiring:
    if (row.mechanism is None) != (row.accountant is None):
        raise ValueError(f"wiring of {row.scheme!r}: give both mechanism and accountant, or neither (no privacy noise)")
    if row.scheme in _ROWS and not replace and _ROWS[row.scheme] != row:
        raise ValueError(f"scheme {row.scheme!r} already has a wiring row")
    _ROWS[row.scheme] = row
    return row


def unregister_wiring(scheme: str) -> None:
    _ROWS.pop(scheme, None)


def wirings() -> tuple[SchemeWiring, ...]:
    _load()
    return tuple(_ROWS.values())


def wiring(scheme: str) -> SchemeWiring:
    """The row of ``scheme``; a registered phy scheme without one is an error naming what is missing."""
    _load()
    row = _ROWS.get(scheme)
    if row is None:
        from phy.schemes import scheme_spec

        spec = scheme_spec(scheme, where="phy.scheme")  # unknown to phy too: that error
        raise ValueError(f"phy.scheme = {scheme!r} is registered in phy (by {spec.aggregator.__module__}) but has no "
                         "wiring row in scenarios: register_wiring(SchemeWiring(...)) names its privacy mechanism, "
                         "calibrated key and threat model (docs/extending.md)")
    return row


def check_wiring(scheme: str) -> SchemeWiring:
    """The row of ``scheme``, with its mechanism registered in privacy (or none declared)."""
    row = wiring(scheme)
    if row.mechanism is not None:
        from privacy.mechanisms import mechanism

        try:
            mechanism(row.mechanism)
        except ValueError as exc:
            raise ValueError(f"phy.scheme = {scheme!r}: its privacy mechanism {row.mechanism!r} is not registered "
                             f"in privacy ({exc}); register it in privacy.mechanisms (docs/extending.md)") from None
    return row


def scheme_accountant(config, *, d: int, D: int):
    """The run's accountant of ``config``'s scheme, or None when the scheme adds no privacy noise.

    ``d`` is the model dimension, ``D`` the examples per client (item level). Errors name ``privacy.*``.
    """
    row = check_wiring(config.phy.scheme)
    if row.accountant is None:
        return None
    try:
        return row.accountant(config, d=d, D=D)
    except ValueError as exc:
        hint = ""
        sampling = getattr(config.training, "sampling", "without-replacement")
        if "use sampling 'poisson' for add-remove" in str(exc) and sampling == "without-replacement":
            hint = " (a run that samples that way: training.sampling = 'poisson', model §1)"
        from privacy.pld import PldTooLarge

        # a PLD too large to build stays PldTooLarge: calibration counts that point as missing its target
        raise (PldTooLarge if isinstance(exc, PldTooLarge) else ValueError)(f"privacy: {exc}{hint}") from exc


def get_phy_key(phy, key: str):
    """The value of a dotted ``[phy]`` key (``"C"``, ``"floras.N"``)."""
    if "." in key:
        scheme, name = key.split(".", 1)
        return getattr(phy.of(scheme), name)
    return getattr(phy, key)


def set_phy_key(phy, key: str, value):
    """``phy`` with the dotted key set."""
    import dataclasses

    if "." in key:
        scheme, name = key.split(".", 1)
        return phy.with_params(scheme, **{name: value})
    return dataclasses.replace(phy, **{key: value})
