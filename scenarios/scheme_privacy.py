"""The privacy accountant of a private baseline's run (SPEC §9, §10; CONTRACT's ``privacy.SchemeRunAccountant``).

:meth:`scenarios.config.ScenarioConfig.privacy_accountant` calls :func:`scheme_accountant` for
every scheme but FLORAS. Each scheme's event, with the threat model its ε covers:

================= ============ ==================================================================
scheme            mechanism    parameters (all in model units of the clipped updates, clip norm C)
================= ============ ==================================================================
central-gaussian  gaussian     noise std z·S of the estimate of Σ s_k, S = 2C (replace) or C
analog-gaussian   gaussian     the same total noise (receiver + artificial), SPEC §9.1
ddgauss           ddgauss      d, C, grid γ (``dd_grid`` or from the bit budget with n = K: each
                               admitted client scales its noise so the sum always has √K·σ),
                               σ = ``dd_local_std``, β
sqsgd             ldp          ε₀ per round (pure LDP; binary randomized response's RDP)
================= ============ ==================================================================

Client sampling is K of M uniformly without replacement (SPEC §1); ``privacy.accountant``
chooses the accountant (``rdp`` = the tightest valid RDP bound per mechanism).
"""

from __future__ import annotations

__all__ = ["THREAT_MODEL", "MECHANISM", "scheme_accountant"]

MECHANISM = {"central-gaussian": "gaussian", "analog-gaussian": "gaussian", "ddgauss": "ddgauss", "sqsgd": "ldp"}
THREAT_MODEL = {
    "central-gaussian": "trusted server; outputs only",
    "analog-gaussian": "T1 and a single-antenna base station",
    "ddgauss": "the server, given secure aggregation",
    "sqsgd": "any observer (T1 and T2)",
}


def scheme_accountant(config, *, d: int):
    """``privacy.SchemeRunAccountant`` of ``config``'s private baseline (ValueError names ``privacy.*``)."""
    try:
        from privacy import SchemeRunAccountant
    except ImportError:
        raise ValueError(f"phy.scheme = {config.phy.scheme!r}: this build has no accountant for the private baselines "
                         "(privacy.SchemeRunAccountant), so its ε cannot be computed or calibrated") from None

    phy, pr, t = config.phy, config.privacy, config.training
    scheme = phy.scheme
    if scheme not in MECHANISM:
        raise ValueError(f"phy.scheme = {scheme!r} has no privacy event (no privacy noise: ε = ∞)")
    common = dict(K=t.clients_per_round, M=config.partition.clients, level=pr.level, relation=pr.relation,
                  sampling="without-replacement", delta=float(pr.delta), accountant=pr.accountant,
                  threat_model=THREAT_MODEL[scheme])
    C = float(phy.clip_norm)
    if scheme in ("central-gaussian", "analog-gaussian"):
        S = 2.0 * C if pr.relation == "replace" else C
        params = dict(clip_norm=C, noise_std=float(phy.noise_multiplier) * S)
    elif scheme == "ddgauss":
        grid = phy.dd_grid
        if grid is None:
            from phy.digital.ddgauss import grid_from_bits

            grid = grid_from_bits(bits=phy.dd_bits, n=t.clients_per_round, d=d, clip=C,
                                  local_std=float(phy.dd_local_std), k_stddevs=float(phy.dd_k_stddevs))
        params = dict(d=d, clip_norm=C, grid=float(grid), local_std=float(phy.dd_local_std), beta=float(phy.dd_beta))
    else:
        params = dict(epsilon0=float(phy.epsilon0))
    try:
        return SchemeRunAccountant(MECHANISM[scheme], **common, **params)
    except ValueError as exc:
        raise ValueError(f"privacy: {exc}") from None
