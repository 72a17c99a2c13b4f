"""``floras privacy``'s link options as a :class:`privacy.link.LinkModel` (model §5, §5.1, §5.2, §7.2 "Link level")."""

from __future__ import annotations

import math

__all__ = ["link_model"]


def link_model(args):
    """The :class:`privacy.link.LinkModel` of ``floras privacy``'s link options (``--snr-db``, ``--L``, ``--csit``,
    ``--rician-k``, ``--rx-antennas``), or None without ``--snr-db``; each bad value refused by its option's name."""
    k = args.rician_k
    if not (math.isfinite(k) and k >= 0.0):
        raise ValueError(f"--rician-k must be a finite number ≥ 0 (the Rician K-factor κ, linear; 0: Rayleigh; got {k!r})")
    n_rx = args.rx_antennas
    if isinstance(n_rx, bool) or not isinstance(n_rx, int) or n_rx < 1:
        raise ValueError(f"--rx-antennas must be an integer ≥ 1 (got {n_rx!r})")
    if n_rx > 1 and (args.csit != "none" or k):
        raise ValueError(f"--rx-antennas {n_rx} is derived for --csit none and Rayleigh gains (model §5.2: one phase "
                         "pre-rotation cannot align every antenna; Rician gains with antennas are not modelled): drop "
                         "--csit phase / --rician-k or use --rx-antennas 1")
    if args.snr_db is None:
        if k:
            raise ValueError("--rician-k sets the gains of the link-level bound: give --snr-db DB too")
        return None
    from privacy.link import LinkModel

    return LinkModel(snr_db=args.snr_db, L=args.L, csit=args.csit, rician_k=k, antennas=n_rx)
