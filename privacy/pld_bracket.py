"""ε from a PLD whose loss-discretization interval is chosen from a target error (model §9.4).

Resolution (model §9.4): the discretization interval h is chosen from a target error by
:func:`epsilon_bracket`. The same event is built twice, with dp_accounting's pessimistic and its
optimistic discretization (losses rounded up, resp. down, to the grid of step h); after
composition the two ε bracket the ε of the PLD being discretized, ε_opt ≤ ε ≤ ε_pess, and the
gap ε_pess − ε_opt is the discretization error, reported with ε_pess. h is refined until
the gap is at most ``target_error``·ε_pess (or ``target_error`` itself when ε_pess < 1). For the
FLORAS mixture both ends keep the pessimistic panels in V (the bracket covers the discretization
of the loss, not the V-panel error, which is on the safe side in both). Without replacement the optimistic end is
the connect-the-dots PMF moved one step down (:mod:`privacy.pld_wor`), so its gap is T·h exactly.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from privacy.pld import DEFAULT_DISCRETIZATION, PldTooLarge, event_pld, self_compose

__all__ = ["DEFAULT_TARGET_ERROR", "MIN_DISCRETIZATION", "PldBracket", "epsilon_bracket"]

#: Default relative target of :func:`epsilon_bracket`: ε_pess − ε_opt ≤ 1 % of ε_pess.
DEFAULT_TARGET_ERROR = 1e-2
#: The finest interval :func:`epsilon_bracket` tries (nats); it reports when the target is still missed there.
MIN_DISCRETIZATION = 1e-6


@dataclass(frozen=True)
class PldBracket:
    """ε after ``rounds`` at δ from the PLD at interval ``discretization``: ``upper`` (pessimistic, the
    reported bound) and ``lower`` (optimistic); ``error`` = upper − lower; ``met``: error within the target."""

    upper: float
    lower: float
    discretization: float
    rounds: int
    delta: float
    target_error: float
    met: bool

    @property
    def error(self) -> float:
        return self.upper - self.lower


def _check_bracket_args(rounds, delta, target_error, start):
    if isinstance(rounds, bool) or not isinstance(rounds, (int, np.integer)) or rounds < 1:
        raise ValueError(f"rounds must be an integer ≥ 1 (got {rounds!r})")
    if not (isinstance(delta, (int, float)) and 0.0 < delta < 1.0):
        raise ValueError(f"delta must be in (0, 1) (got {delta!r})")
    if not (isinstance(target_error, (int, float)) and 0.0 < target_error < 1.0):
        raise ValueError(f"pld target error must be in (0, 1) (got {target_error!r}): the allowed ε_pess − ε_opt as a "
                         "fraction of ε_pess, e.g. 0.01")
    if not (isinstance(start, (int, float)) and MIN_DISCRETIZATION <= start <= 0.1):
        raise ValueError(f"pld discretization must be in [{MIN_DISCRETIZATION:g}, 0.1] nats (got {start!r})")


def epsilon_bracket(event, *, rounds: int, delta: float, target_error: float = DEFAULT_TARGET_ERROR,
                    start: float = DEFAULT_DISCRETIZATION) -> PldBracket:
    """ε of ``rounds`` compositions of ``event`` at ``delta``, with the interval chosen from a target error.

    From h = ``start`` the pessimistic and the optimistic PLD are composed and converted; while
    the gap exceeds the allowance a = ``target_error``·max(ε_pess, 1), h shrinks to
    h·0.8·a/gap (each round's loss moves by at most h either way, so the gap shrinks about
    linearly with h), by a factor between 2 and 16, down to :data:`MIN_DISCRETIZATION`.
    Returns a :class:`PldBracket` (``met`` False when even the finest interval misses the target, or when a
    finer one would pass :data:`MAX_GRID_POINTS`: the last bracket computed is returned then; at ``start``
    itself :class:`PldTooLarge` propagates).
    """
    _check_bracket_args(rounds, delta, target_error, start)
    h = float(start)
    last = None
    while True:
        try:
            up = float(self_compose(event_pld(event, discretization=h), rounds).get_epsilon_for_delta(delta))
            lo = float(self_compose(event_pld(event, discretization=h, pessimistic=False), rounds)
                       .get_epsilon_for_delta(delta))
        except PldTooLarge:
            if last is None:
                raise
            return last
        up, lo = max(up, 0.0), max(min(lo, up), 0.0)
        allowance = target_error * max(up, 1.0)
        met = up - lo <= allowance
        last = PldBracket(up, lo, h, int(rounds), float(delta), float(target_error), met or not math.isfinite(up))
        if met or h <= MIN_DISCRETIZATION or not math.isfinite(up):
            return last
        h = max(MIN_DISCRETIZATION, h * min(0.5, max(1.0 / 16.0, 0.8 * allowance / (up - lo))))
