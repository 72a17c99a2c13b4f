"""Each scheme's privacy accountant and threat model for a run (model §7, §9): the dispatch behind
:meth:`scenarios.config.scenario.ScenarioConfig.privacy_accountant`
(``config`` below is always a :class:`~scenarios.config.scenario.ScenarioConfig`).

FLORAS: :class:`privacy.FlorasRunAccountant` (threat model T1, with the link model's ε_link);
the private baselines (central and analog Gaussian, DDGauss) and sqSGD:
:class:`privacy.SchemeRunAccountant` of their own event, in model units, with their own threat
model (sqSGD's is :data:`privacy.scheme.LDP_THREAT_MODEL`, shared with ``floras privacy``).
"""

from __future__ import annotations

__all__ = ["PRIVATE_BASELINES", "BASELINE_THREAT_MODELS", "scheme_accountant"]


# ---- private baselines (model §9.1, §9.2): each scheme's own event and threat model
PRIVATE_BASELINES = ("central-gaussian", "analog-gaussian", "ddgauss")
BASELINE_THREAT_MODELS = {
    "central-gaussian": "trusted server; outputs only",
    "analog-gaussian": "T1 and a single-antenna base station (it sees only the superposition; the receiver-noise "
                       "share of the privacy noise assumes the base station cannot remove it)",
    "ddgauss": "the server, given secure aggregation (it sees only the modular sum)",
}


def _baseline_accountant_of(config, *, d: int):
    """SchemeRunAccountant of a private baseline, in model units (clip norm R = phy.clip_norm).

    Gaussian schemes: σ = z·S·R/C with S = 2C or C, i.e. z·2R or z·R (central); analog: the std every
    admitted round is certain to carry (:func:`phy.analog_gaussian.guaranteed_noise_std`). DDGauss:
    n = K contributors at σ = dd_local_std and the aggregator's γ (the K′ admitted clients scale their
    noise by √(K/K′), which the n = K bound covers; see :mod:`phy.digital.ddgauss`).
    """
    from privacy import SchemeRunAccountant

    t, pr, phy = config.training, config.privacy, config.phy
    common = dict(K=t.clients_per_round, M=config.partition.clients, level=pr.level, relation=pr.relation,
                  sampling="without-replacement", delta=float(pr.delta), threat_model=BASELINE_THREAT_MODELS[phy.scheme],
                  accountant=pr.accountant)
    R = float(phy.clip_norm)
    if phy.scheme == "ddgauss":
        from phy.digital.ddgauss import resolve_grid

        grid, _ = resolve_grid(phy, K=t.clients_per_round, d=d)
        return SchemeRunAccountant("ddgauss", **common, d=d, clip_norm=R, grid=grid,
                                   local_std=float(phy.dd_local_std), beta=float(phy.dd_beta))
    from phy.central_gaussian import sum_sensitivity

    if phy.scheme == "analog-gaussian":
        from phy.analog_gaussian import guaranteed_noise_std

        noise = guaranteed_noise_std(phy, d=d, relation=pr.relation) * R / phy.norm_bound(d)
    else:
        noise = float(phy.noise_multiplier) * sum_sensitivity(R, pr.relation)
    return SchemeRunAccountant("gaussian", **common, clip_norm=R, noise_std=noise)


def scheme_accountant(config, *, d: int, D: int):
    """The run's accountant: :class:`privacy.FlorasRunAccountant` for FLORAS (model §7), the
    :class:`privacy.SchemeRunAccountant` of its own event for the private baselines and sqSGD (model §9).

    Client sampling is uniform without replacement (model §1); ``local_steps`` is None in
    ``local_epochs`` mode (every record is used: q_touch = 1). Errors name ``privacy.*``. The
    accountant is ``rdp`` (conditional-Gaussian bound, model §9.5); the link model (SNR, L, CSIT)
    makes every report carry the link-level ``epsilon_link`` (privacy/link.py). sqSGD: pure ε₀-LDP
    rounds (model §9.3).
    """
    if config.phy.scheme == "sqsgd":
        return _sqsgd_accountant(config)
    from privacy import FlorasRunAccountant
    from privacy.link import LinkModel

    t, pr, phy = config.training, config.privacy, config.phy
    if phy.scheme in PRIVATE_BASELINES:
        try:
            return _baseline_accountant_of(config, d=d)
        except ValueError as exc:
            raise ValueError(f"privacy: {exc}") from None
    try:
        return FlorasRunAccountant(
            link=LinkModel(snr_db=float(phy.snr_db), L=int(phy.L), csit=phy.csit),
            K=t.clients_per_round, N=phy.N, M=config.partition.clients, d=d,
            normalization=phy.normalization, C=phy.C if phy.C is None else float(phy.C), power=float(phy.power),
            clip_norm=phy.clip_norm, level=pr.level, relation=pr.relation, sampling="without-replacement",
            delta=float(pr.delta), local_steps=t.local_steps, batch_size=t.batch_size, local_dataset_size=D,
            accountant=pr.accountant,
        )
    except ValueError as exc:
        raise ValueError(f"privacy: {exc}") from None


def _sqsgd_accountant(config):
    """:class:`privacy.SchemeRunAccountant` ("ldp") of a sqSGD run: pure ε₀ per round (model §9.3).

    Client sampling as for the other schemes: K of M without replacement (replace-one) or Poisson
    (add/remove), from ``[privacy] relation``. Full local epochs: item level equals client level.
    Threat model: the mechanism's default, :data:`privacy.scheme.LDP_THREAT_MODEL`, the one text
    ``floras privacy --mechanism ldp`` also prints (amplified for T1, K = M for T2).
    """
    from privacy import SchemeRunAccountant

    t, pr = config.training, config.privacy
    sampling = "without-replacement" if pr.relation == "replace" else "poisson"
    try:
        return SchemeRunAccountant("ldp", K=t.clients_per_round, M=config.partition.clients, level=pr.level,
                                   relation=pr.relation, sampling=sampling, delta=float(pr.delta),
                                   epsilon0=float(config.phy.epsilon0),
                                   accountant=pr.accountant)
    except ValueError as exc:
        raise ValueError(f"privacy: {exc}") from None
