"""The privacy mechanisms a run can be accounted under (model §7, §9), each declared once.

A mechanism module declares one :class:`Mechanism` and calls :func:`register_mechanism`: its
name, the parameters it takes, its default threat model (one wording, used by every report and
table), and ``round_event(params, K=, relation=)`` → :class:`MechanismRound`, the per-round
event with its sensitivity and the sentences that describe it. :class:`privacy.run_accountant.RunAccountant`
samples that event and composes it; a mechanism with its own sampling chain (FLORAS's item-level
record sampling, model §7.3) names its own accountant class instead. The built-in mechanisms are
registered on first lookup (:data:`BUILTIN_MODULES`); a mechanism defined elsewhere registers
itself when imported.
"""

from __future__ import annotations

import importlib
import threading
from dataclasses import dataclass, field
from difflib import get_close_matches
from typing import Any, Callable

__all__ = ["Mechanism", "MechanismRound", "BUILTIN_MODULES", "register_mechanism", "unregister_mechanism",
           "mechanism", "mechanism_names"]

BUILTIN_MODULES = ("privacy.mechanisms.floras", "privacy.mechanisms.gaussian", "privacy.mechanisms.ddgauss",
                   "privacy.mechanisms.ldp")


@dataclass(frozen=True)
class MechanismRound:
    """One round of a mechanism: the event, its ℓ2 sensitivity (None when not a sensitivity-scaled
    mechanism) and the report's sentences for it."""

    event: Any
    sensitivity: float | None
    lines: tuple[str, ...]


@dataclass(frozen=True)
class Mechanism:
    """A privacy mechanism as the run accountant sees it.

    Attributes
    ----------
    name : str
        Its name (``floras privacy --mechanism``).
    required, optional : tuple of str
        The keyword parameters ``round_event`` takes.
    threat_model : str
        The default threat model text of every report of this mechanism.
    round_event : callable or None
        ``round_event(params, *, K, relation)`` → :class:`MechanismRound`.
    poisson_refusal : str or None
        Why Poisson client sampling with K < M is refused for it (None: allowed).
    run_accountant : callable or None
        A mechanism that builds its own sampled event (FLORAS) names its accountant class here;
        it takes the run accountant's keywords and the mechanism's parameters.
    trade_off : str or None
        The trade-off function the ``fdp`` accountant uses for one round, in words (model §9.4);
        None: none is known and ``fdp`` refuses the mechanism.
    """

    name: str
    threat_model: str
    round_event: Callable[..., MechanismRound] | None = None
    required: tuple[str, ...] = ()
    optional: tuple[str, ...] = ()
    poisson_refusal: str | None = None
    run_accountant: Callable[..., Any] | None = field(default=None, compare=False)
    trade_off: str | None = None


_REGISTRY: dict[str, Mechanism] = {}
_LOADED = False
_LOCK = threading.Lock()


def _load_builtins() -> None:
    """Import the built-in mechanism modules once (thread-safe)."""
    global _LOADED
    if _LOADED:
        return
    with _LOCK:
        if not _LOADED:
            for module in BUILTIN_MODULES:
                importlib.import_module(module)
            _LOADED = True


def register_mechanism(mech: Mechanism, *, replace: bool = False) -> Mechanism:
    """Add ``mech``; a second mechanism of the same name is an error unless ``replace``."""
    if not isinstance(mech, Mechanism):
        raise TypeError(f"register_mechanism takes a Mechanism (got {type(mech).__name__})")
    if (mech.round_event is None) == (mech.run_accountant is None):
        raise ValueError(f"mechanism {mech.name!r} must give exactly one of round_event and run_accountant")
    if mech.name in _REGISTRY and not replace and _REGISTRY[mech.name] != mech:
        raise ValueError(f"mechanism {mech.name!r} is already registered")
    _REGISTRY[mech.name] = mech
    return mech


def unregister_mechanism(name: str) -> None:
    _REGISTRY.pop(name, None)


def mechanism_names() -> tuple[str, ...]:
    _load_builtins()
    return tuple(_REGISTRY)


def mechanism(name: str) -> Mechanism:
    """The mechanism called ``name``; ValueError naming the registered ones otherwise."""
    _load_builtins()
    mech = _REGISTRY.get(name) if isinstance(name, str) else None
    if mech is None:
        close = get_close_matches(str(name), list(_REGISTRY), n=1, cutoff=0.6)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        raise ValueError(f"mechanism must be one of {{{', '.join(_REGISTRY)}}} (got {name!r}){hint}")
    return mech
