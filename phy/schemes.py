"""The scheme registry of the physical layer (model §6, §9): every aggregation scheme declared once.

A scheme module declares one :class:`SchemeSpec` — its name, its aggregator's constructor, the
dataclass of its ``[phy.<name>]`` parameters and the record that summarises it in a link-level
study — and calls :func:`register_scheme`. Every generic loop (the aggregator factory, the
configuration's validation, :func:`phy.link_simulation.simulate_link`, and above ``phy`` the
calibration, tables and figures) finds schemes here; there is no list of scheme names anywhere
else. The built-in schemes are registered on first lookup (:data:`BUILTIN_MODULES`); a scheme
defined elsewhere (a study's own module, a test) registers itself when imported.

A scheme's parameter class is a frozen dataclass with plain typed fields (TOML values) and
``check(phy, *, K, d, active)``, which raises :class:`ValueError` naming ``phy.<name>.<key>``;
``active`` is True when the scheme is the one configured (cross-checks against K, d and the
shared keys run only then). Its optional class attribute ``moved_from`` maps the flat ``[phy]``
key of earlier scenario files to the field's name, so such a file gets an error naming the
key's new place.
"""

from __future__ import annotations

import importlib
import threading
from dataclasses import dataclass, field
from difflib import get_close_matches
from typing import Any, Callable, Mapping

__all__ = ["SchemeSpec", "BUILTIN_MODULES", "register_scheme", "unregister_scheme", "scheme_spec", "scheme_names",
           "make_aggregator"]

#: modules that register the built-in schemes, in the order tables and figures list them
BUILTIN_MODULES = (
    "phy.floras", "phy.channel_inversion", "phy.ideal", "phy.central_gaussian", "phy.analog_gaussian",
    "phy.digital.ddgauss", "phy.digital.sqsgd",
)


@dataclass(frozen=True)
class SchemeSpec:
    """One aggregation scheme as the rest of the simulator sees it.

    Attributes
    ----------
    name : str
        The value of ``phy.scheme`` (and of ``--scheme``); lower case, digits and hyphens.
    aggregator : callable
        ``aggregator(config, *, K, d, seed, key, relation)`` → an :class:`phy.aggregation.Aggregator`.
        ``key`` is the clients' permutation key (None unless ``needs_key``); ``relation`` the run's
        neighbouring relation (schemes whose noise scales the sensitivity use it).
    params : type or None
        Dataclass of the ``[phy.<name>]`` sub-table; None for a scheme without parameters.
    link_record : callable
        ``link_record(aggregator, d)`` → an object with ``record(result, trace, x)`` (one round) and
        ``summary()`` (a dict of the scheme's link-level summary fields, model §5).
    needs_key : bool
        The scheme uses the clients' secret permutation key (model §4).
    requires_clip : bool
        The scheme's privacy needs the public clip norm: ``normalization = "clip"`` only (model §9).
    description : str
        One line for ``--help`` and reports.
    example : mapping
        ``[phy]`` keys (its sub-table included) of a small valid configuration that adds the
        scheme's noise: what the contract tests over the registry run (tests/test_scheme_contracts.py).
    unbiased : bool
        E[x̂] = Σ_{contributors} x_k (false for FLORAS: its Cauchy error has no mean, model §6.1).
    channel : {"none", "block-fading", "cell", "cell-coherence"}
        What of the radio channel the scheme models (model §5, §5.1): "none" (no radio link, e.g. ideal
        aggregation: the channel keys do not apply), "block-fading" (the §5 link only: a cell, Rician
        fading or coherence blocks are refused by the configuration), "cell" (also the cell's large-scale
        gains, power control and Rician fading), "cell-coherence" (also several coherence blocks per update).
    chip_timing : bool
        The scheme models fractional-chip timing offsets (``phy.timing_offset``, :mod:`phy.chip_timing`).
    rx_antennas : bool
        The scheme models a base station with ``phy.rx_antennas`` > 1 receive antennas (model §5.2).
    antennas_with : tuple of str
        The ``[phy]`` keys the scheme also models with N_r > 1 antennas, among "coherence_symbols" (several
        coherence blocks, model §5.2 "Antennas over coherence blocks") and "timing_offset" (chip-timing offsets);
        the configuration refuses the others with N_r > 1.
    """

    name: str
    aggregator: Callable[..., Any]
    link_record: Callable[..., Any]
    params: type | None = None
    needs_key: bool = False
    requires_clip: bool = False
    description: str = ""
    example: Mapping[str, Any] = field(default_factory=dict)
    unbiased: bool = True
    channel: str = "block-fading"
    chip_timing: bool = False
    rx_antennas: bool = False
    antennas_with: tuple = ()

    def default_params(self):
        return None if self.params is None else self.params()


_REGISTRY: dict[str, SchemeSpec] = {}
_LOADED = False
_LOCK = threading.Lock()


def _load_builtins() -> None:
    """Import the built-in scheme modules once (thread-safe: sweep workers look schemes up from threads)."""
    global _LOADED
    if _LOADED:
        return
    with _LOCK:
        if not _LOADED:
            for module in BUILTIN_MODULES:
                importlib.import_module(module)
            _LOADED = True


def _order(spec: SchemeSpec) -> int:
    module = spec.aggregator.__module__
    return BUILTIN_MODULES.index(module) if module in BUILTIN_MODULES else len(BUILTIN_MODULES)


def register_scheme(spec: SchemeSpec, *, replace: bool = False) -> SchemeSpec:
    """Add ``spec`` to the registry; a second scheme of the same name is an error unless ``replace``."""
    if not isinstance(spec, SchemeSpec):
        raise TypeError(f"register_scheme takes a SchemeSpec (got {type(spec).__name__})")
    name = spec.name
    if not name or not all(c.islower() or c.isdigit() or c == "-" for c in name) or name[0] == "-":
        raise ValueError(f"scheme name must be lower-case letters, digits and hyphens (got {name!r})")
    if name in _REGISTRY and not replace and _REGISTRY[name] is not spec:
        raise ValueError(f"scheme {name!r} is already registered (by {_REGISTRY[name].aggregator.__module__})")
    if spec.channel not in ("none", "block-fading", "cell", "cell-coherence"):
        raise ValueError(f"scheme {name!r}: channel must be one of {{none, block-fading, cell, cell-coherence}} (got {spec.channel!r})")
    if spec.params is not None and not hasattr(spec.params, "check"):
        raise TypeError(f"scheme {name!r}: its params class {spec.params.__name__} needs a check(phy, *, K, d, active) method")
    _REGISTRY[name] = spec
    return spec


def unregister_scheme(name: str) -> None:
    """Remove a scheme (a study or test that registered its own)."""
    _REGISTRY.pop(name, None)


def scheme_names() -> tuple[str, ...]:
    """Every registered scheme, built-ins first in :data:`BUILTIN_MODULES` order."""
    _load_builtins()
    return tuple(name for name, _ in sorted(_REGISTRY.items(), key=lambda item: _order(item[1])))


def scheme_spec(name: str, *, where: str = "scheme") -> SchemeSpec:
    """The spec of ``name``; an unknown name is a ValueError naming ``where`` and the registered schemes."""
    _load_builtins()
    spec = _REGISTRY.get(name) if isinstance(name, str) else None
    if spec is None:
        close = get_close_matches(str(name), list(_REGISTRY), n=1, cutoff=0.6)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        raise ValueError(f"{where} must be one of {{{', '.join(scheme_names())}}} (got {name!r}){hint}")
    return spec


def make_aggregator(config, *, K: int, d: int, seed: int, key: bytes | None = None, relation: str = "replace"):
    """Build the aggregator that ``config.scheme`` names (model §6, §9).

    ``key`` is the clients' shared secret for the keyed permutation (model §4; schemes with
    ``needs_key`` only, ≥ 16 bytes); it is held by the client side of the link and never reaches
    the base-station receiver. ``relation`` ("replace" or "add-remove", the run's ``[privacy]
    relation``) fixes the sensitivity S = 2C or C that a noise multiplier scales (model §9.1).
    """
    spec = scheme_spec(config.scheme)
    config.validate(K=K, d=d)
    if spec.needs_key and key is None:
        raise ValueError(f"key must be given (≥ 16 bytes) for the {spec.name} scheme")
    return spec.aggregator(config, K=K, d=d, seed=seed, key=key if spec.needs_key else None, relation=relation)
