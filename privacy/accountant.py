"""The RDP accountant: evaluates privacy events order by order and converts to (ε, δ).

Layering (after Google's dp_accounting): :mod:`privacy.events` describes mechanisms,
:mod:`privacy.rdp` holds the mathematics, and :class:`RdpAccountant` keeps only a run-length
history and the running RDP curve. ``compose`` evaluates the event first, so an invalid or
unsupported event raises before anything changes. The wrappers (sampling, composition) are
evaluated here; a leaf event gives its own curves (:meth:`privacy.events.PrivacyEvent.rdp`,
``eps_inf``, ``sampled_rdp``).
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

from privacy import rdp as _rdp
from privacy.events import Composed, PoissonSampled, PrivacyEvent, SampledWithoutReplacement, SelfComposed

__all__ = ["METHODS", "RdpAccountant", "event_rdp", "event_eps_inf", "edge_warning", "clear_cache"]

#: How sampled events are evaluated: ``tight`` uses the mechanism-specific bound where one
#: exists (sampled Gaussian: dp_accounting; sampled FLORAS round: model §9.5) and the generic bound
#: otherwise; ``generic`` uses the generic bounds (WBK 2019 Thm 9, Zhu & Wang 2019 Thm 6) always.
METHODS = ("tight", "generic")

#: The composition algebra, evaluated structurally here; every other event is a leaf with its own methods.
_WRAPPERS = (SampledWithoutReplacement, PoissonSampled, SelfComposed, Composed)


def event_eps_inf(event: PrivacyEvent) -> float:
    """An upper bound on the pure-DP level ε(∞) of ``event`` (∞ when none is known)."""
    if isinstance(event, (SampledWithoutReplacement, PoissonSampled)):
        return event_eps_inf(event.event)  # subsampling never increases it (coupling argument)
    if isinstance(event, SelfComposed):
        inner = event_eps_inf(event.event)
        return 0.0 if event.count == 0 else event.count * inner
    if isinstance(event, Composed):
        return float(sum(event_eps_inf(e) for e in event.events))
    if isinstance(event, PrivacyEvent):
        return event.eps_inf()
    raise ValueError(f"unsupported privacy event {type(event).__name__}")


@lru_cache(maxsize=256)
def _event_rdp_cached(event: PrivacyEvent, orders: tuple, method: str) -> np.ndarray:
    out = _event_rdp(event, np.asarray(orders, dtype=np.float64), method)
    out.setflags(write=False)
    return out


def clear_cache() -> None:
    """Forget the cached event curves (events are immutable, so the cache is only a speed-up)."""
    _event_rdp_cached.cache_clear()


def _sampled_tight(event, a: np.ndarray) -> np.ndarray | None:
    """The mechanism-specific curve of a sampled event, or None when there is none."""
    scheme = "without-replacement" if isinstance(event, SampledWithoutReplacement) else "poisson"
    inner = event.event
    if isinstance(inner, _WRAPPERS):
        return None
    return inner.sampled_rdp(a, scheme=scheme, rate=event.rate)


def _event_rdp(event: PrivacyEvent, a: np.ndarray, method: str = "tight") -> np.ndarray:
    if isinstance(event, (SampledWithoutReplacement, PoissonSampled)):
        j_max = int(max(2, math.ceil(float(a.max()))))
        base_int = event_rdp(event.event, np.arange(2.0, j_max + 1.0), method=method)
        base_orders = event_rdp(event.event, a, method=method)
        if isinstance(event, SampledWithoutReplacement):
            generic = _rdp.wor_subsampled_rdp(
                a, rate=event.rate, base_int=base_int, base_orders_rdp=base_orders, eps_inf=event_eps_inf(event.event)
            )
        else:
            generic = _rdp.poisson_subsampled_rdp(a, rate=event.rate, base_int=base_int, base_orders_rdp=base_orders)
        tight = _sampled_tight(event, a) if method == "tight" else None
        # both are upper bounds on the same divergence, so their minimum is one too
        return generic if tight is None else np.minimum(generic, tight)
    if isinstance(event, SelfComposed):
        if event.count == 0:
            return np.zeros_like(a)
        return event.count * event_rdp(event.event, a, method=method)
    if isinstance(event, Composed):
        total = np.zeros_like(a)
        for e in event.events:
            total = total + event_rdp(e, a, method=method)
        return total
    if isinstance(event, PrivacyEvent):
        return event.rdp(a)
    raise ValueError(f"unsupported privacy event {type(event).__name__}")


def event_rdp(event: PrivacyEvent, orders, *, method: str = "tight") -> np.ndarray:
    """RDP curve ε(α) of ``event`` at ``orders`` [n] float64 (nats; ∞ allowed). Pure; cached.

    ``method`` is ``tight`` (default: mechanism-specific sampling bounds where they exist) or
    ``generic`` (the generic sampling bounds only), see :data:`METHODS`.
    """
    if not isinstance(event, PrivacyEvent):
        raise ValueError(f"event must be a PrivacyEvent (got {type(event).__name__})")
    if method not in METHODS:
        raise ValueError(f"method must be one of {{{', '.join(METHODS)}}} (got {method!r})")
    a = _rdp.check_orders(orders)
    return np.array(_event_rdp_cached(event, tuple(a.tolist()), method))


def edge_warning(orders: np.ndarray, index: int, value: float) -> str | None:
    """A warning when the optimum over the order grid sits at its smallest or largest order."""
    if not math.isfinite(value) or value == 0.0:
        return None
    if index == 0:
        return (
            f"the best Rényi order is the smallest of the grid (α = {orders[0]:.6g}); "
            "smaller orders might give a smaller ε: extend the grid towards 1"
        )
    if index == len(orders) - 1:
        return (
            f"the best Rényi order is the largest of the grid (α = {orders[-1]:.6g}); "
            "larger orders might give a smaller ε: extend the grid upwards"
        )
    return None


class RdpAccountant:
    """Running RDP curve over a fixed grid of orders, composed from events.

    Parameters
    ----------
    orders : sequence of float > 1, optional
        The grid (sorted, duplicates removed); default :data:`privacy.rdp.DEFAULT_ORDERS`.
    method : "tight" (default) or "generic"
        How sampled events are evaluated (:data:`METHODS`).
    """

    name = "Rényi-DP accountant (privacy.RdpAccountant)"

    def __init__(self, orders=None, *, method: str = "tight"):
        if method not in METHODS:
            raise ValueError(f"method must be one of {{{', '.join(METHODS)}}} (got {method!r})")
        self.method = method
        a = _rdp.check_orders(_rdp.DEFAULT_ORDERS if orders is None else orders)
        self._orders = np.unique(a)
        self._rdp = np.zeros_like(self._orders)
        self._history: list[tuple[PrivacyEvent, int]] = []

    @property
    def orders(self) -> np.ndarray:
        return self._orders.copy()

    @property
    def rdp(self) -> np.ndarray:
        """The composed RDP curve [n] float64 at :attr:`orders`."""
        return self._rdp.copy()

    @property
    def history(self) -> tuple[tuple[PrivacyEvent, int], ...]:
        """Run-length history of the composed events: ((event, count), …)."""
        return tuple(self._history)

    def compose(self, event: PrivacyEvent, count: int = 1) -> "RdpAccountant":
        """Add ``count`` repetitions of ``event``; raises (and changes nothing) if it is invalid."""
        if isinstance(count, bool) or not isinstance(count, (int, np.integer)) or count < 0:
            raise ValueError(f"count must be an integer ≥ 0 (got {count!r})")
        curve = event_rdp(event, self._orders, method=self.method)  # validates the whole event tree first
        if count == 0:
            return self
        new = self._rdp + int(count) * curve
        self._rdp = new
        if self._history and self._history[-1][0] == event:
            self._history[-1] = (event, self._history[-1][1] + int(count))
        else:
            self._history.append((event, int(count)))
        return self

    def get_epsilon_and_order(self, delta: float, *, conversion: str = "tight") -> tuple[float, float]:
        """(ε, the order α that attains it) for the given δ."""
        eps, idx = _rdp.epsilon_from_rdp(self._orders, self._rdp, delta=delta, conversion=conversion)
        return eps, float(self._orders[idx])

    def get_epsilon(self, delta: float, *, conversion: str = "tight") -> float:
        return self.get_epsilon_and_order(delta, conversion=conversion)[0]

    def get_delta_and_order(self, epsilon: float, *, conversion: str = "tight") -> tuple[float, float]:
        delta, idx = _rdp.delta_from_rdp(self._orders, self._rdp, epsilon=epsilon, conversion=conversion)
        return delta, float(self._orders[idx])

    def get_delta(self, epsilon: float, *, conversion: str = "tight") -> float:
        return self.get_delta_and_order(epsilon, conversion=conversion)[0]
