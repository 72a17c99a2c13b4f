"""The wiring rows of the built-in schemes (:mod:`scenarios.config.schemes`; model §7, §9, §10).

Each accountant builder takes the validated scenario, the model dimension d and the examples per
client D, and returns the scheme's run accountant in model units. Client sampling is the run's
``training.sampling`` (model §1): K of M uniformly without replacement (replace-one), or Poisson at
q = K/M (add/remove; the run then samples that way, :mod:`fl.sampling`), unless a row says otherwise; full local epochs make item level
equal client level (the FLORAS accountant also covers local steps, model §7.3).
"""

from __future__ import annotations

from scenarios.config.analog_csi import csi_accountant
from scenarios.config.analog_exposure import scheduled_separating
from scenarios.config.floras_link import floras_link_model, floras_pilot_blocks
from scenarios.config.schemes import Calibrated, SchemeWiring, register_wiring


def _sampling(config) -> str:
    """``training.sampling`` (a configuration-like object without it samples without replacement)."""
    return getattr(config.training, "sampling", "without-replacement")


def _common(config) -> dict:
    t, pr = config.training, config.privacy
    return dict(K=t.clients_per_round, M=config.partition.clients, level=pr.level, relation=pr.relation,
                sampling=_sampling(config), delta=float(pr.delta), accountant=pr.accountant)


# ---------------------------------------------------------------- FLORAS (model §7)
def _floras(config, *, d: int, D: int):
    from privacy import FlorasRunAccountant

    t, phy, p = config.training, config.phy, config.phy.of("floras")
    from scenarios.config.floras_timing import timing_accountant, uses_law

    if uses_law(config):  # the law given the pilots (model §5.1): with offsets and N > K, or asked for
        return timing_accountant(config, d=d, common=_common(config), threat="T1 only (output observer)")
    pilots, blocks, stale = floras_pilot_blocks(phy, d=d, accountant=config.privacy.accountant, K=t.clients_per_round)
    return FlorasRunAccountant(
        link=floras_link_model(config, blocks=blocks, stale=stale), pilot_blocks=pilots, antennas=int(phy.rx_antennas),
        N=p.N, d=d,
        normalization=phy.normalization, C=phy.C if phy.C is None else float(phy.C), power=float(phy.power),
        clip_norm=phy.clip_norm, local_steps=t.local_steps, batch_size=t.batch_size, local_dataset_size=D,
        **_common(config))


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
