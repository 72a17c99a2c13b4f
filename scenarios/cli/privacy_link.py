"""``floras privacy``'s link options as a :class:`privacy.link.LinkModel` (model §5, §5.1, §5.2, §7.2 "Link level")."""

from __future__ import annotations

import math

__all__ = ["link_model", "coherence_blocks", "add_coherence_options"]

CORRELATIONS = ("iid", "jakes", "jakes-exact")  # "tdl" needs its delay profile: a scenario file's [phy] keys


def add_coherence_options(p) -> None:
    """``--coherence-symbols``, ``--pilots``, ``--fading-correlation``, ``--doppler`` of ``floras privacy``."""
    p.add_argument("--coherence-symbols", type=int, default=None, metavar="N_C",
                   help="floras: coherence blocks of N_C symbols within the update (model §5.1; default: one block)")
    p.add_argument("--pilots", choices=("per-block", "stale"), default="per-block",
                   help="floras with --coherence-symbols: a pilot per block (ε over the B pilots) or one stale pilot "
                        "(the one-pilot ε; ε_link over the aging factors, model §7.2)")
    p.add_argument("--fading-correlation", default="iid",
                   help="floras with --coherence-symbols: iid (default), jakes (AR(1)) or jakes-exact (Clarke) blocks")
    p.add_argument("--doppler", type=float, default=0.0, help="floras with jakes blocks: f_D·T_s (default 0)")


def coherence_blocks(args) -> tuple[int, int, tuple | None]:
    """(pilot blocks of ε, coherence blocks of ε_link, the stale pilot's block correlations or None) of ``floras
    privacy``'s coherence options (``--coherence-symbols``, ``--pilots``, ``--fading-correlation``, ``--doppler``;
    model §5.1, §7.2), through the scenario's own rule (:func:`scenarios.config.floras_link.floras_pilot_blocks`);
    (1, 1, None) without ``--coherence-symbols``. Each bad value refused by its option's name."""
    n_c, law, doppler = args.coherence_symbols, args.fading_correlation, args.doppler
    if n_c is None:
        if law != "iid" or doppler != 0.0 or args.pilots != "per-block":
            raise ValueError("--fading-correlation, --doppler and --pilots describe coherence blocks: give "
                             "--coherence-symbols N_C too")
        return 1, 1, None
    least = 2 if args.pilots == "per-block" else 1
    if isinstance(n_c, bool) or not isinstance(n_c, int) or n_c < least:
        raise ValueError(f"--coherence-symbols must be an integer ≥ {least} with --pilots {args.pilots} (got {n_c!r})")
    if law not in CORRELATIONS:
        raise ValueError(f"--fading-correlation must be one of {{{', '.join(CORRELATIONS)}}} (got {law!r}; TDL "
                         "subcarriers need their delay profile: run a scenario with phy.fading_correlation = \"tdl\")")
    if not (math.isfinite(doppler) and doppler >= 0.0) or (doppler > 0.0 and law == "iid"):
        raise ValueError(f"--doppler must be a finite f_D·T_s ≥ 0, and 0 with --fading-correlation iid (got {doppler!r} "
                         f"with {law})")
    from phy.coherence import MAX_EXACT_BLOCKS, coherence_plan
    from phy.config import PhyConfig
    from scenarios.config.floras_link import floras_pilot_blocks

    plan = coherence_plan(args.d, n_c, args.pilots)
    if law == "jakes-exact" and plan.n_blocks > MAX_EXACT_BLOCKS:
        raise ValueError(f"--fading-correlation jakes-exact takes at most {MAX_EXACT_BLOCKS} blocks (got "
                         f"{plan.n_blocks} for --d {args.d} and --coherence-symbols {n_c}): raise --coherence-symbols or "
                         "use jakes")
    phy = PhyConfig.make(scheme="floras", coherence_symbols=n_c, fading_correlation=law, doppler=float(doppler),
                         rician_k=float(args.rician_k), floras={"N": int(args.N), "csit": args.csit, "pilots": args.pilots})
    return floras_pilot_blocks(phy, d=args.d, accountant=args.accountant, K=args.K)


def link_model(args, blocks: tuple[int, int, tuple | None] = (1, 1, None)):
    """The :class:`privacy.link.LinkModel` of ``floras privacy``'s link options (``--snr-db``, ``--L``, ``--csit``,
    ``--rician-k``, ``--rx-antennas``) and its coherence blocks (:func:`coherence_blocks`), or None without
    ``--snr-db``; each bad value refused by its option's name."""
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

    _, n_blocks, stale = blocks
    return LinkModel(snr_db=args.snr_db, L=args.L, csit=args.csit, rician_k=k, antennas=n_rx, blocks=n_blocks, stale=stale)
