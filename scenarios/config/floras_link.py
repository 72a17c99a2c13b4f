"""FLORAS's link model for ε_link and its pilot blocks per round (model §5.1, §5.2, §7.2 "Link level"): the rule the
run accountant (:mod:`scenarios.config.builtin_schemes`) and ``floras privacy`` (:mod:`scenarios.cli.privacy_link`)
share."""

from __future__ import annotations

import json

__all__ = ["MAX_LINK_POPULATION", "DROP_CHUNK", "floras_link_model", "floras_pilot_blocks"]

# clients whose β_eff the link-level bound draws: ~25 µs each with log-distance, ~0.2 ms each through
# Sionna's TR 38.901 scenarios (a few seconds at either limit)
MAX_LINK_POPULATION = {"log-distance": 2 * 10**5, "tr38901": 10**4}
DROP_CHUNK = 1024  # clients per call of the path-loss model
_DROPS: dict = {}  # (phy table, seed, M, T) → β_eff of clients 0..M−1 (of each of the T rounds when re-dropped)


def floras_link_model(config, *, blocks: int, stale: tuple | None = None):
    """The :class:`privacy.link.LinkModel` of the run: with a cell the β_eff of clients 0..M−1 of the run's drop
    (:class:`phy.cell.CellChannel` at ``run.seed``, the cell the run's link uses; model §5.1); ``stale``: the blocks'
    correlations with block 0 under one stale pilot."""
    import numpy as np

    from phy.cell import CellChannel
    from privacy.link import LinkModel

    phy = config.phy
    common = dict(snr_db=float(phy.snr_db), L=int(phy.L), csit=phy.of("floras").csit, blocks=blocks,
                  rician_k=float(phy.los_k), antennas=int(phy.rx_antennas), stale=stale)
    if phy.los_k != 0.0 and int(phy.rx_antennas) > 1:
        return LinkModel(**{**common, "rician_k": 0.0, "stale": None, "blocks": 1}, undefined=(
            f"Rician gains (κ = {float(phy.los_k):g}) with {int(phy.rx_antennas)} receive antennas: the law of the "
            "maximum-ratio factors with a line of sight steered over the array is not derived for the link-level "
            "bound; ε, the idealised release, does not depend on the fading"))
    if stale is not None and int(phy.rx_antennas) > 1:
        return LinkModel(**{**common, "stale": None, "blocks": 1}, undefined=(
            f"one stale pilot for {blocks} coherence blocks with {int(phy.rx_antennas)} receive antennas: the law of "
            "the maximum-ratio factors Σ_r c_(j,r,0)·g_(k,m,r) is not derived for the link-level bound; ε, the "
            "idealised release with the stale pilot's V, holds"))
    if phy.csi_error != 0.0:  # phase CSIT from an estimate: the gains |h|·cos(∠h − ∠ĥ) (model §5.1)
        if phy.los_k != 0.0:
            return LinkModel(**common, undefined=(
                f"phase CSIT from an estimate (csi_error = {float(phy.csi_error):g}) over Rician gains is not derived "
                "for the link-level bound; ε, the idealised release, does not depend on the channel"))
        common["csi_error"] = float(phy.csi_error)
    if not phy.has_cell:
        return LinkModel(**common)
    M, seed = int(config.partition.clients), int(config.run.seed)
    cell = CellChannel(phy, seed=seed)
    note = (f"{phy.pathloss} cell of radius {float(phy.cell_radius):g} m, {phy.power_control}, SNR reference "
            f"{phy.snr_reference}")
    # a fixed drop: clients 0..M−1 once; re-dropped: every round's drop of them (T·M gains, conditioned on, model §7.2)
    rounds = int(config.run.rounds) if phy.redrop else 1
    limit = MAX_LINK_POPULATION["log-distance" if phy.pathloss == "log-distance" else "tr38901"]
    if M * rounds > limit:
        what = f"the drop of M = {M}" if rounds == 1 else f"the T·M = {rounds}·{M} re-drops"
        return LinkModel(**common, undefined=(
            f"{what} > {limit} clients ({phy.pathloss}) is not drawn for the link-level bound (its cost); "
            "ε, the idealised release, does not depend on the cell"))
    key = (json.dumps(phy.to_dict(), sort_keys=True, default=str), seed, M, rounds)
    if key not in _DROPS:
        # in chunks (the TR 38.901 scenario holds UT–UT pairs per call); round t's drop with phy.redrop
        parts = [np.array_split(np.arange(M, dtype=np.int64), -(-M // DROP_CHUNK))] * rounds
        eff = np.concatenate([cell.large_scale(ids, K=ids.size, round_index=t).gain_eff
                              for t, chunks in enumerate(parts) for ids in chunks])
        _DROPS.clear()  # one population kept: validation and the run's build share it
        _DROPS[key] = tuple(eff.tolist())
    if phy.redrop:
        return LinkModel(**common, gain_scales=_DROPS[key], drop_rounds=rounds,
                         cell_note=f"{note}, re-dropped every round at run.seed = {seed}")
    return LinkModel(**common, gain_scales=_DROPS[key], cell_note=f"{note}, the fixed drop of run.seed = {seed}")


def floras_pilot_blocks(phy, *, d: int, accountant: str, K: int) -> tuple[int, int, tuple | None]:
    """(pilot blocks of FLORAS's ε, coherence blocks B of its ε_link, the stale pilot's block correlations or None)
    per round (privacy.link, model §5.1, §7.2): no timing offsets; one pilot per block (B pilots: the Rényi
    accountants or the PLD), or one stale pilot for B blocks (ε the one-pilot release's; ε_link over the factors
    g_(k,m)/g_(k,0) with pilot noise, privacy.link_stale: Rayleigh gains, exact; Rician gains without CSIT exact given
    the line of sight's phase, as (Re r_m, θ_m) pairs with its rotation θ_m, privacy.link_stale_los; with phase CSIT a
    bound, Rician gains given as (|r_m|, D_m) pairs with the line of sight's distance D_m); a cell (fixed or
    re-dropped every round) and Rician gains (`rician_k`, TDL-D/E: ε_link takes their law) are allowed.
    Several receive antennas (maximum ratio, model §5.2) have every accountant (model §9.5, "Several antennas") and an
    ε_link over the maximum-ratio factors (privacy.link), also with a pilot per coherence block (model §5.2,
    "Antennas over coherence blocks"; with one stale pilot ε_link is not stated). Timing offsets are allowed with N = K (γ = 0: no inactive
    sequence, no privacy noise, ε = ∞ whatever the link; model §5.1)."""
    from phy.coherence import coherence_plan

    noiseless = int(phy.of("floras").N) == int(K)  # γ = 0: ε = ∞, nothing of the link to derive
    if phy.timing_offset != 0.0 and not noiseless:  # a run takes scenarios.config.floras_timing instead
        raise ValueError("phy.timing_offset: this bound (the Cauchy release and ε_link over the factors) is derived for "
                         "chip-synchronous clients (model §5.1): an offset leaks the active sequences into the "
                         "inactive pilots, whose noise is then not Cauchy; a scenario with N > K and offsets takes the "
                         "law of the loss given the pilots (privacy.accountant \"pld\" or \"tightest\", model §5.1 "
                         "\"FLORAS's ε with offsets\"); remove phy.timing_offset here")
    pilots = phy.of("floras").pilots
    plan = coherence_plan(d, phy.coherence_symbols, pilots)
    if plan.n_pilots != plan.n_blocks:  # one stale pilot for B > 1 blocks
        phase = phy.of("floras").csit == "phase"
        import numpy as np

        from phy.coherence import block0_correlations, los_block_phases

        r = block0_correlations(phy, plan.n_blocks)  # the scattered part's: Re r_m without CSIT, |r_m| with phase CSIT
        rho = np.clip(np.abs(r), 0.0, 1.0) if phase else np.clip(r.real, -1.0, 1.0)
        if phy.los_k == 0:
            return 1, plan.n_blocks, tuple(float(x) for x in rho)
        # with a line of sight, each block's second number: without CSIT the specular part's turn θ_m
        # (privacy.link_stale_los), with phase CSIT its distance D_m = |e^{jθ_m} − r_m| (privacy.link_stale)
        theta = los_block_phases(phy, plan.n_blocks)
        second = np.abs(np.exp(1j * theta) - r) if phase else theta
        second[0] = 0.0
        return 1, plan.n_blocks, tuple((float(x), float(y)) for x, y in zip(rho, second))
    if plan.n_blocks > 1 and accountant not in ("rdp", "rdp-generic", "rdp-revealed", "pld", "tightest"):
        raise ValueError(f"privacy.accountant: with per-block pilots (B = {plan.n_blocks} blocks, model §5.1) FLORAS's "
                         "ε is derived under the Rényi bounds and the PLD over V_min (model §9.5, \"Several pilots\"); "
                         f"got accountant = {accountant!r}, use \"rdp\", \"rdp-generic\", \"rdp-revealed\", \"pld\" "
                         "or \"tightest\"")
    return plan.n_blocks, plan.n_blocks, None
