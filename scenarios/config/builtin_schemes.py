"""The wiring rows of the built-in schemes (:mod:`scenarios.config.schemes`; model §7, §9, §10).

Each accountant builder takes the validated scenario, the model dimension d and the examples per
client D, and returns the scheme's run accountant in model units. Client sampling is the run's
``training.sampling`` (model §1): K of M uniformly without replacement (replace-one), or Poisson at
q = K/M (add/remove; the run then samples that way, :mod:`fl.sampling`), unless a row says otherwise; full local epochs make item level
equal client level (the FLORAS accountant also covers local steps, model §7.3).
"""

from __future__ import annotations

import json

from scenarios.config.analog_csi import csi_accountant
from scenarios.config.analog_exposure import scheduled_separating
from scenarios.config.schemes import Calibrated, SchemeWiring, register_wiring


def _sampling(config) -> str:
    """``training.sampling`` (a configuration-like object without it samples without replacement)."""
    return getattr(config.training, "sampling", "without-replacement")


def _common(config) -> dict:
    t, pr = config.training, config.privacy
    return dict(K=t.clients_per_round, M=config.partition.clients, level=pr.level, relation=pr.relation,
                sampling=_sampling(config), delta=float(pr.delta), accountant=pr.accountant)


# ---------------------------------------------------------------- FLORAS (model §7)
# clients whose β_eff the link-level bound draws: ~25 µs each with log-distance, ~0.2 ms each through
# Sionna's TR 38.901 scenarios (a few seconds at either limit)
MAX_LINK_POPULATION = {"log-distance": 2 * 10**5, "tr38901": 10**4}
DROP_CHUNK = 1024  # clients per call of the path-loss model
_DROPS: dict = {}  # (phy table, seed, M, T) → β_eff of clients 0..M−1 (of each of the T rounds when re-dropped)


def _floras(config, *, d: int, D: int):
    from privacy import FlorasRunAccountant

    t, phy, p = config.training, config.phy, config.phy.of("floras")
    pilots, blocks, stale = floras_pilot_blocks(phy, d=d, accountant=config.privacy.accountant, K=t.clients_per_round)
    return FlorasRunAccountant(
        link=_floras_link_model(config, blocks=blocks, stale=stale), pilot_blocks=pilots, antennas=int(phy.rx_antennas),
        N=p.N, d=d,
        normalization=phy.normalization, C=phy.C if phy.C is None else float(phy.C), power=float(phy.power),
        clip_norm=phy.clip_norm, local_steps=t.local_steps, batch_size=t.batch_size, local_dataset_size=D,
        **_common(config))


def _floras_link_model(config, *, blocks: int, stale: tuple | None = None):
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
    if phy.timing_offset != 0.0 and not noiseless:
        raise ValueError("phy.timing_offset: FLORAS's ε is derived for chip-synchronous clients (model §5.1): an "
                         "offset leaks the active sequences into the inactive pilots, whose noise is then not Cauchy; "
                         "remove phy.timing_offset for a FLORAS run (floras link studies it without an ε; timing "
                         "offsets run with floras.N = K, γ = 0, ε = ∞)")
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


def _floras_defaults(phy: dict, *, K: int) -> dict:
    """N = max(K, 30) and L the smallest power of two ≥ N, unless given (Walsh–Hadamard needs N ≤ L = 2^m)."""
    own = dict(phy.get("floras", {}))
    own.setdefault("N", max(K, 30))
    out = {**phy, "floras": own}
    out.setdefault("L", 1 << max(0, (int(own["N"]) - 1).bit_length()))
    return out


register_wiring(SchemeWiring(
    scheme="floras", depends_on_d=True, scenario_defaults=_floras_defaults, label="FLORAS", mechanism="floras", accountant=_floras,
    threat_model="T1 only (output observer)",
    calibrated={
        # C [√W]; ε(C = 1e-4) ≈ 0.004 at K = 20 of M = 100, T = 200, γ = 12
        "C": Calibrated("C", increasing=True, bracket=(1e-4, 1e4), noiseless=("floras.N", "K")),
        # N ≤ L for orthonormal sequences; 2^14 also keeps S/γ where the tight bound evaluates
        "N": Calibrated("floras.N", increasing=False, bracket=("K", 2**14), integer=True, noiseless=("floras.N", "K")),
    },
    style={"color": "tab:blue"},
))


# ---------------------------------------------------------------- the Gaussian schemes (model §9.1)
def _central(config, *, d: int, D: int):
    """σ = z·S·R/C with S = 2C or C, i.e. z·2R or z·R in model units (R = phy.clip_norm)."""
    from phy.central_gaussian import sum_sensitivity
    from privacy import RunAccountant

    R = float(config.phy.clip_norm)
    z = float(config.phy.of("central-gaussian").noise_multiplier)
    return RunAccountant("gaussian", **_common(config), threat_model=CENTRAL.threat_model, clip_norm=R,
                         noise_std=z * sum_sensitivity(R, config.privacy.relation))


def _analog(config, *, d: int, D: int):
    """The std every admitted round is certain to carry (:func:`phy.analog_gaussian.guaranteed_noise_std`; with
    N_r > 1 receive antennas the clients' artificial noise only, model §5.2). With N_r > 1 or chip-timing offsets
    the guarantee covers the released aggregate only (T1); the threat-model line adds the T2 bound of
    :func:`_analog_t2` (each client's own share of the noise). With imperfect CSI (``phy.csi_error`` > 0) the round's
    strength is random: :func:`scenarios.config.analog_csi.csi_accountant`."""
    from phy.analog_gaussian import guaranteed_noise_std
    from privacy import RunAccountant

    phy, R = config.phy, float(config.phy.clip_norm)
    noise = guaranteed_noise_std(phy, d=d, relation=config.privacy.relation) * R / phy.norm_bound(d)
    threat = ANALOG.threat_model
    if phy.timing_offset != 0.0:  # the inflated noise covers the released ŝ, for replace-one neighbours (model §5.1)
        if config.privacy.relation != "replace":
            raise ValueError("privacy.relation: analog Gaussian's guarantee with chip-timing offsets is derived for "
                             "replace-one neighbours (the artificial noise's covariance depends on which clients "
                             f"transmit, model §5.1); got {config.privacy.relation!r}: use relation = \"replace\" "
                             "or remove phy.timing_offset")
        threat = ("T1 only (output observer of the released aggregate): with chip-timing offsets a base station that "
                  "reads chip 0 of each symbol apart sees data and noise mixed with other weights (model §5.1); "
                  + _analog_t2(config, d=d))
    elif phy.rx_antennas > 1:
        threat = (f"T1 only (output observer of the released aggregate; only the clients' artificial noise counts): "
                  f"a base station with {phy.rx_antennas} receive antennas that keeps every antenna's signal can "
                  "separate the clients spatially (model §5.2); " + _analog_t2(config, d=d))
    if phy.csi_error != 0.0:  # the gains Re(h/ĥ) make the strength random: its revealed law (model §5.1)
        return csi_accountant(config, d=d, common=_common(config), threat=threat)
    return RunAccountant("gaussian", **_common(config), threat_model=threat, clip_norm=R, noise_std=noise)


def _analog_t2(config, *, d: int) -> str:
    """The T2 line of analog Gaussian where the aggregate's guarantee does not cover the base station (model §5.2):
    the same accounting with each client's own certain share of the artificial noise,
    :func:`phy.analog_gaussian.client_noise_floor`, as the noise of a Gaussian mechanism on its update."""
    from phy.analog_gaussian import client_noise_floor
    from privacy import RunAccountant

    phy, K, T = config.phy, int(config.training.clients_per_round), int(config.run.rounds)
    std = client_noise_floor(phy, K=K, d=d, relation=config.privacy.relation) * float(phy.clip_norm) / phy.norm_bound(d)
    where = "T2 (a base station that keeps its raw signals): bounded only by each client's own share of the artificial noise"
    if std == 0.0:
        return (f"{where}, which is 0 when the receiver noise alone may exceed the target (σ_n²/g_th ≥ σ_T²): "
                "no T2 guarantee (model §5.2)")
    eps = RunAccountant("gaussian", **_common(config), clip_norm=float(phy.clip_norm), noise_std=std).epsilon(rounds=T)
    return (f"{where}, std ≥ {std:.6g} per client (K = {K} admitted at most), the same sampling and accountant "
            f"(amplification assumes the base station does not learn who was sampled): ε_T2 ≤ {eps:.4g} after {T} "
            "rounds at the same δ (derived, model §5.2)")


CENTRAL = register_wiring(SchemeWiring(
    scheme="central-gaussian", label="central Gaussian", mechanism="gaussian", accountant=_central,
    threat_model="trusted server; outputs only",
    calibrated={"noise_multiplier": Calibrated("central-gaussian.noise_multiplier", increasing=False,
                                               bracket=(1e-4, 1e5), noiseless=("central-gaussian.noise_multiplier", 0.0))},
    snr_independent=True, style={"color": "tab:green"},
))
ANALOG = register_wiring(SchemeWiring(
    scheme="analog-gaussian", label="analog Gaussian", mechanism="gaussian", accountant=_analog,
    threat_model=("T1 and a single-antenna base station (it sees only the superposition; the receiver noise counts "
                  "as privacy noise; client-sampling amplification assumes it does not learn who was sampled)"),
    calibrated={"noise_multiplier": Calibrated("analog-gaussian.noise_multiplier", increasing=False,
                                               bracket=(1e-4, 1e5), noiseless=("analog-gaussian.noise_multiplier", 0.0))},
    style={"color": "tab:olive"}, exposure=scheduled_separating,
))


# ---------------------------------------------------------------- DDGauss (model §9.2)
def _ddgauss(config, *, d: int, D: int):
    """n = K contributors at σ = local_std and the aggregator's γ (the K′ admitted clients scale their noise
    by √(K/K′), which the n = K bound covers; :mod:`phy.digital.ddgauss`). Sampling: the run's, K of M without
    replacement (replace-one), or with ``training.sampling = "poisson"`` the source's Poisson accounting (Zhu &
    Wang's general bound, add/remove) of a run that samples each client with probability K/M and carries n = K
    noise shares at σ in every round whatever its cohort (:mod:`phy.cohort`). Dropout after noising of a
    fraction f: the noise of the survivors, 1 − f."""
    from phy.digital.ddgauss import resolve_grid
    from privacy import RunAccountant

    phy, p = config.phy, config.phy.of("ddgauss")
    grid, _ = resolve_grid(phy, K=config.training.clients_per_round, d=d)
    return RunAccountant("ddgauss", **_common(config), threat_model=DDGAUSS.threat_model, d=d,
                         clip_norm=float(phy.clip_norm), grid=grid, local_std=float(p.local_std), beta=float(p.beta),
                         noise_fraction=1.0 - float(p.dropout))


DDGAUSS = register_wiring(SchemeWiring(
    scheme="ddgauss", label="DDGauss", depends_on_d=True, mechanism="ddgauss", accountant=_ddgauss,
    threat_model="the server, given secure aggregation (it sees only the modular sum)",
    calibrated={"local_std": Calibrated("ddgauss.local_std", increasing=False, bracket=(1e-9, 1e9),
                                        noiseless=("ddgauss.local_std", 0.0))},
    snr_independent=True, style={"color": "tab:purple"},
))


# ---------------------------------------------------------------- sqSGD (model §9.3)
def _sqsgd(config, *, d: int, D: int):
    """Pure ε₀ per round (and ε_s with the adaptive norm bound, composed); K of M without replacement
    (replace-one) or Poisson (add/remove)."""
    from privacy import RunAccountant
    from privacy.mechanisms.ldp import THREAT_MODEL

    common = _common(config)
    if _sampling(config) == "without-replacement":  # as before: add/remove is accounted as Poisson
        common["sampling"] = "without-replacement" if config.privacy.relation == "replace" else "poisson"
    p = config.phy.of("sqsgd")
    extra = {"epsilon_s": float(p.epsilon_s)} if p.norm_bound == "adaptive" else {}
    return RunAccountant("ldp", **common, threat_model=THREAT_MODEL, epsilon0=float(p.epsilon0), **extra)


register_wiring(SchemeWiring(
    scheme="sqsgd", label="sqSGD", mechanism="ldp", accountant=_sqsgd,
    threat_model="any observer (T1 and T2)",
    calibrated={"epsilon0": Calibrated("sqsgd.epsilon0", increasing=True, bracket=(1e-3, 50.0))},
    snr_independent=True, style={"color": "tab:red"},
))


# ---------------------------------------------------------------- no privacy noise
register_wiring(SchemeWiring(scheme="ideal", label="ideal", threat_model="none (no privacy noise)",
                             snr_independent=True, style={"color": "black"}))
register_wiring(SchemeWiring(scheme="channel-inversion", label="channel inversion", threat_model="none (no privacy noise)",
                             style={"color": "tab:orange"}))
