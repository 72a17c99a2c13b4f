"""Channel uses of one aggregation round, per scheme (model §5).

One "channel use" is one real chip (a real-valued symbol interval at per-chip SNR P/σ²):

- FLORAS: (d + 1)·L — d data slots and one reference slot, each spread over L chips; with a reference slot per
  coherence block (model §5.1) (d + B)·L for B blocks;
- channel inversion and other analog schemes without spreading: d·L under the equal-resource
  convention (each symbol repeated over L chips) or d under the source-literal one;
- digital schemes: Σ_{admitted} ⌈bits_k / r_k⌉ at the Shannon rate (:mod:`phy.digital.uplink`).
"""

from __future__ import annotations

__all__ = ["floras_channel_uses", "analog_channel_uses"]


def _positive_int(name: str, value) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{name} must be an integer ≥ 1 (got {value!r})")
    return int(value)


def floras_channel_uses(*, d: int, L: int, pilots: int = 1) -> int:
    """(d + P)·L real channel uses: d data slots plus P reference slots (one per coherence block with per-block
    pilots, model §5.1; P = 1 otherwise), L chips each."""
    return (_positive_int("d", d) + _positive_int("pilots", pilots)) * _positive_int("L", L)


def analog_channel_uses(*, d: int, L: int, resource: str) -> int:
    """d·L (``resource = "equal"``) or d (``"source-literal"``) real channel uses."""
    d, L = _positive_int("d", d), _positive_int("L", L)
    if resource == "equal":
        return d * L
    if resource == "source-literal":
        return d
    raise ValueError(f"resource must be one of {{equal, source-literal}} (got {resource!r})")
