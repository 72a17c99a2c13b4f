"""Registry of large-scale path-loss models (model §5.1).

A path-loss model maps the 2-D distances d [m] of the clients to the base station (and their LoS state)
to a path loss PL [dB], gives the LoS probability of a client at distance d and the standard deviation of
its log-normal shadowing σ_SF [dB]. The cell (:mod:`phy.cell`) finds models here by the name in
``phy.pathloss``; ``"none"`` (no model: every client has average gain 1, the link of model §5) is not a
model but the absence of one. Built-in models: ``log-distance`` (:mod:`phy.channels.log_distance`) and
the 3GPP TR 38.901 scenarios ``umi``, ``uma``, ``rma`` through Sionna (:mod:`phy.channels.tr38901`).

A model is an object with

- ``name``: its registry name;
- ``pathloss_db(distance, *, los, config) -> [K] float64``: PL [dB] (``los``: [K] bool);
- ``los_probability(distance, *, config) -> [K] float64`` in [0, 1];
- ``shadowing_std_db(distance, *, los, config) -> [K] float64``: the model's own σ_SF [dB];
- ``reference_state``: the LoS state (bool) at which the SNR reference distance is evaluated;
- ``uses_heights``: whether ``phy.bs_height`` / ``phy.ut_height`` / ``phy.carrier_ghz`` enter PL.
"""

from __future__ import annotations

import importlib

__all__ = ["register_pathloss", "pathloss_model", "pathloss_names", "BUILTIN_MODULES"]

BUILTIN_MODULES = ("phy.channels.log_distance", "phy.channels.tr38901")
_REGISTRY: dict[str, object] = {}
_LOADED = False


def register_pathloss(model) -> object:
    """Add a path-loss model (an object with the attributes of the module docstring) under ``model.name``."""
    name = getattr(model, "name", None)
    if not isinstance(name, str) or not name or name == "none":
        raise ValueError(f"a path-loss model needs a name other than 'none' (got {name!r})")
    if name in _REGISTRY and _REGISTRY[name] is not model:
        raise ValueError(f"path-loss model {name!r} is already registered")
    _REGISTRY[name] = model
    return model


def _load() -> None:
    global _LOADED
    if not _LOADED:
        for module in BUILTIN_MODULES:
            importlib.import_module(module)
        _LOADED = True


def pathloss_names() -> tuple[str, ...]:
    """Every registered model, in registration order (``"none"`` excluded)."""
    _load()
    return tuple(_REGISTRY)


def pathloss_model(name: str):
    """The model registered as ``name``; an unknown name is a ValueError listing the allowed ones."""
    _load()
    model = _REGISTRY.get(name)
    if model is None:
        raise ValueError(f"pathloss must be one of {{none, {', '.join(pathloss_names())}}} (got {name!r})")
    return model
