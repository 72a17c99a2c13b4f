"""The T1 accountant's ε for the audit game's configuration, with its assumptions (model §7.2, §7.5)."""

from __future__ import annotations

__all__ = ["accountant_upper"]


def accountant_upper(*, K: int, N: int, d: int, C: float | None, power: float, clip_norm: float, neighbour: str,
                     delta: float, sequences: str = "walsh-hadamard", snr_db: float | None = None, L: int = 32,
                     csit: str = "none", rician_k: float = 0.0, antennas: int = 1) -> dict:
    """ε of one FLORAS round under T1 for the game's neighbouring pair, from :class:`privacy.FlorasRunAccountant`.

    The game schedules the canary in its round (M = K, p = 1: no sampling amplification) and plays
    one round. ``replace`` ↦ relation "replace" (S = 2C/b); ``zero`` ↦ relation "add-remove" at
    client level (S = C/b: the canary's s_k present or absent).

    ``valid_for_link`` is False: ε bounds the idealised release Σ s_k/b + Cauchy noise, while the
    simulated link scales each active term by the unbounded c_k = g_k b/(g_k b + w_k). With
    ``snr_db`` the link-level ε of :mod:`privacy.link` is added as ``epsilon_link`` (a valid bound
    for the link; often ∞ at one antenna, because P(|c_k| > c) decays only like 1/c), under the gains' law: Rayleigh,
    or Rician with K-factor ``rician_k`` (model §5.1). ``antennas`` N_r > 1: the ε of the maximum-ratio aggregate
    (model §9.5, "Several antennas") and its ε_link (model §7.2, "Link level"; the factors' tail falls as c^{−N_r}).
    """
    from privacy import FlorasRunAccountant
    from privacy.link import LinkModel

    if neighbour == "replace":
        kwargs = dict(relation="replace", sampling="without-replacement")
    else:
        kwargs = dict(relation="add-remove", sampling="poisson")
    acc = FlorasRunAccountant(K=K, N=N, M=K, d=d, normalization="clip", C=C, power=power, clip_norm=clip_norm,
                              level="client", delta=delta, antennas=int(antennas),
                              link=None if snr_db is None else LinkModel(snr_db=float(snr_db), L=int(L), csit=csit,
                                                                         rician_k=float(rician_k),
                                                                         antennas=int(antennas)), **kwargs)
    rep = acc.report(rounds=1)
    out = rep.to_dict()
    out["assumptions"] = list(out["assumptions"]) + [
        "audit game: one round with the canary client scheduled (M = K, sampling probability 1: no amplification)",
        (
            "neighbouring pair played: canary update x_c vs −x_c (‖Δs‖ = 2C)"
            if neighbour == "replace"
            else "neighbouring pair played: canary update x_c vs 0, the client still sending its reference slot (‖Δs‖ = C)"
        ),
    ]
    out["valid_for_link"] = False
    out["assumptions"].append(
        "epsilon is proved for the idealised release Σ_k s_k/b + Cauchy noise only: the simulated link multiplies each "
        "active client's term by c_k = g_k b/(g_k b + w_k), which is unbounded, so epsilon does NOT bound the link; "
        "epsilon_link (privacy/link.py) is the link-level figure"
    )
    if sequences == "pn":
        out["assumptions"].append(
            "WARNING: non-orthogonal (pn) sequences: the inactive-sequence noise is not the isotropic Cauchy "
            "release of model §7.2, so neither epsilon nor epsilon_link is a valid bound for the simulated link"
        )
        out["epsilon_link"] = "inf"
    return out
