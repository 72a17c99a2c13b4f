"""Digital uplinks (model §5 "Digital uplink", §9): bits sent error-free at the Shannon rate.

This package holds the digital side of the physical layer: the TDMA Shannon-rate uplink model
(:mod:`phy.digital.uplink`) that turns bits into channel uses, and the encoders of the digital
private-aggregation schemes, each in its own module.
"""
