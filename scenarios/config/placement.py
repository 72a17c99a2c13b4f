"""``partition.placement``'s cross-table rules (model §8): "by-distance" needs one fixed drop of a cell, and a
partition to place."""

from __future__ import annotations

from scenarios.config.tables import fail

__all__ = ["validate_placement"]


def validate_placement(config) -> None:
    """Raise ValueError naming ``partition.placement`` when "by-distance" has no fixed distances to order by."""
    p, d = config.partition, config.data
    if p.placement == "by-distance":  # labels tied to the cell's drop (model §8): one fixed drop per client
        if not config.phy.has_cell:
            fail("partition.placement", "'random' without a cell (phy.pathloss = 'none' has no distances to "
                 "order clients by); set phy.pathloss to a cell model for 'by-distance'", p.placement)
        if config.phy.redrop:
            fail("partition.placement", "'random' with phy.redrop = true (a client's distance changes every round); "
                 "set phy.redrop = false for 'by-distance'", p.placement)
        if d.name == "fedprox":
            fail("partition.placement", "'random' for data.name = 'fedprox' (a population's clients carry their "
                 "own data; there is no partition to place)", p.placement)
