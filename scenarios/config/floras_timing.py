"""FLORAS's accountant from the law given the pilots (model §5.1, "FLORAS's ε with offsets"): with chip-timing offsets
and inactive sequences (N > K), the only bound derived there, and for synchronous clients when
``phy.floras.privacy_bound = "law"`` (the bound that holds for the simulated link, where the idealised release's
c_k = 1 does not; :func:`uses_law`).

Given the round's pilots, gains, offsets and assignment — data-independent, here all **revealed to the observer**
(a bound for the T1 observer, who sees ŝ only) — client k's round is a Gaussian mechanism of strength
μ_k = √Λ_k·S (:mod:`phy.floras_leakage`; S = 2C/b in units of ŝ/b). Without a cell the rounds' slots are
exchangeable, so the observer's μ (a uniformly chosen active slot, client k's when it is sampled) has one law
whether or not k is sampled, and each round is the sampled pair of :mod:`privacy.pld_wor` given μ, mixed over its
law (the argument of analog Gaussian with imperfect CSI, model §5.1). The law of √Λ is drawn by Monte Carlo
(:func:`phy.floras_timing_law.loss_counts`: :data:`TIMING_DRAWS` rounds, one slot each, a fixed stream) and made
stochastically larger with confidence 1 − :data:`TIMING_BETA` by Clopper–Pearson limits on its exceedance at
geometric thresholds, each also bounded by the receiver-noise bound √Λ ≤ κ·|g| (κ = b(1 + τ_max·max|A|)/σ_n,
g = Re h ~ N(0, ½) or |h| Rayleigh), which holds with certainty and caps the tail above the largest draw
(:func:`privacy.gaussian_mixture.tail_band_law`). Strengths above :data:`MU_CAP` are counted as infinite (the update
released without noise; pessimistic). The law's tail has every Rényi moment infinite, so only the PLD accountants
(``pld``, ``tightest``) give a finite ε.
"""

from __future__ import annotations

import functools
import math

__all__ = ["MU_CAP", "coarsen", "TIMING_BETA", "TIMING_DRAWS", "timing_accountant", "timing_law", "uses_law"]

#: Monte Carlo rounds of the law of √Λ, and the confidence 1 − β of its band
TIMING_DRAWS, TIMING_BETA = 200_000_000, 1e-6
#: strengths above this are counted as μ = ∞ (pessimistic: a Gaussian of strength 8 is not far from the update
#: itself, and its PLD grid grows as μ²)
MU_CAP = 8.0
#: the PLD's strength grid: ratio and floor (strengths rounded up onto it: about 185 panels up to MU_CAP)
MU_RATIO, MU_FLOOR = 1.05, 1e-3
#: the top threshold in units of κ (the thresholds are fixed before the draws)
_UPPER_SIGMAS = 8.0  # P(|g| > 8) ≤ e^{−64} < 2·10⁻²⁸ (either CSIT)


def uses_law(config) -> bool:
    """Whether a FLORAS run's ε is the law given the pilots: ``phy.floras.privacy_bound = "law"``, or ``"auto"`` with
    chip-timing offsets and N > K (the only bound derived there; model §5.1)."""
    phy = config.phy
    if phy.scheme != "floras":
        return False
    p = phy.of("floras")
    if p.privacy_bound == "auto":
        return phy.timing_offset != 0.0 and int(p.N) > int(config.training.clients_per_round)
    return p.privacy_bound == "law"


def _refusal(config) -> str | None:
    t, pr, phy = config.training, config.privacy, config.phy
    what = "FLORAS's ε from the law given the pilots" + (" (chip-timing offsets)" if phy.timing_offset != 0.0 else "")
    out = ("or remove phy.timing_offset" if phy.timing_offset != 0.0
           else "or set phy.floras.privacy_bound = \"auto\" (the idealised release)")
    if pr.relation != "replace" or getattr(t, "sampling", "without-replacement") != "without-replacement":
        return (f"privacy.relation: {what} is derived for replace-one neighbours sampled without replacement (the "
                "sampled pair given the revealed strength); use relation = \"replace\" and training.sampling = "
                f"\"without-replacement\", {out}")
    if pr.level != "client":
        return f"privacy.level: {what} is derived at client level; use level = \"client\", {out}"
    if pr.accountant not in ("pld", "tightest"):
        return (f"privacy.accountant = {pr.accountant!r}: {what}: the strength law's tail (its Monte Carlo band's mass at "
                "μ = ∞) makes every Rényi moment infinite (model §5.1, \"FLORAS's ε with offsets\"); use accountant "
                f"\"pld\" or \"tightest\" (the PLD), {out}")
    if phy.timing_offset != 0.0 and phy.of("floras").path != "chip":
        return ("phy.floras.path: timing offsets are simulated on the chip path; set phy.floras.path = \"chip\"")
    return None


def _progress(done: int, total: int) -> None:
    """A line on standard error at every tenth of the law's rounds (minutes at 10⁸)."""
    import sys

    step = max(total // 10, 1)
    if done == total or done // step != (done - min(done, 1 << 15)) // step:
        print(f"FLORAS timing-offset law: {done}/{total} rounds", file=sys.stderr, flush=True)


def _stored_counts(key: tuple, draws: int, thresholds, draw):
    """The law's exceedance counts from the law store (:mod:`scenarios.store.laws`: drawn once, read by every later
    process of the same link and code), else ``draw()``, stored."""
    import hashlib

    from scenarios.store import laws

    request = {"law": "floras-pilots", "sequences": hashlib.sha256(key[0]).hexdigest(), "shape": list(key[1]),
               "K": key[2], "b": key[3], "noise_std": key[4], "timing_offset": key[5], "csit": key[6],
               "draws": int(draws)}
    counts = laws.load_counts(request, thresholds)
    if counts is None:
        counts = draw()
        laws.save_counts(request, thresholds, counts)
    return counts


@functools.lru_cache(maxsize=8)
def _law(key: tuple, draws: int, beta: float):
    """The band law of √Λ for the link ``key`` = (A's bytes, its shape, K, b, σ_n, τ_max, CSIT): what the law reads,
    and nothing else (C, the clip norm or the rounds do not change it, so a calibration's bisection draws it once)."""
    import numpy as np

    from phy.floras_timing_law import LawLink, loss_counts
    from privacy.gaussian_mixture import tail_band_law, tail_thresholds

    A = np.frombuffer(key[0], dtype=np.float64).reshape(key[1])
    law = LawLink(A, K=key[2], b=key[3], noise_std=key[4], timing_offset=key[5], csit=key[6])
    kappa = law.b * (1.0 + law.tau_max * float(np.abs(law.A).max())) / law.noise_std
    thresholds = tail_thresholds(_UPPER_SIGMAS * kappa, span=1e6)
    counts = _stored_counts(key, draws, thresholds, lambda: loss_counts(
        law, rounds=draws, thresholds=thresholds, progress=_progress if draws >= 10**7 else None))
    x = thresholds / kappa
    bound = [math.erfc(v) for v in x] if law.csit == "none" else np.exp(-x * x)
    values, weights = tail_band_law(counts, draws, thresholds=thresholds, beta=beta, bound=bound)
    return values, weights, kappa


def timing_law(config, *, draws: int | None = None, beta: float | None = None):
    """(values, weights, κ) of the dominating law of √Λ (unit sensitivity) for the FLORAS run ``config`` (module
    docstring); cached per link (the sequences, K, b, σ_n, τ_max and the CSIT)."""
    from phy.floras_timing_law import law_link

    phy = config.phy
    # Walsh–Hadamard sequences do not depend on the seed: one law for every seed of a sweep
    seed = 0 if phy.of("floras").sequences == "walsh-hadamard" else int(config.run.seed)
    law = law_link(phy, K=int(config.training.clients_per_round), seed=seed)
    key = (law.A.tobytes(), law.A.shape, law.K, law.b, law.noise_std, law.tau_max, law.csit)
    return _law(key, TIMING_DRAWS if draws is None else int(draws), TIMING_BETA if beta is None else float(beta))


def coarsen(mu, weights, *, ratio: float = MU_RATIO, floor: float = MU_FLOOR, cap: float = MU_CAP):
    """(strengths, weights) of the law (``mu`` ≥ 0, possibly ∞; ``weights``) rounded up onto the grid floor·ratio^j
    (strengths below ``floor`` up to it, 0 kept), those above ``cap`` to ∞: a stochastically larger law on fewer
    panels (each panel is one PLD of the mixture)."""
    import numpy as np

    mu, w = np.asarray(mu, dtype=np.float64), np.asarray(weights, dtype=np.float64)
    top = int(math.ceil(math.log(cap / floor) / math.log(ratio) - 1e-9))
    grid = np.concatenate([[0.0], floor * ratio ** np.arange(top + 1, dtype=np.float64), [math.inf]])
    j = np.full(mu.shape, grid.size - 1)
    pos = (mu > 0.0) & np.isfinite(mu) & (mu <= floor * ratio**top)
    j[pos] = 1 + np.maximum(np.ceil(np.log(mu[pos] / floor) / math.log(ratio) - 1e-12), 0).astype(np.int64)
    j[mu == 0.0] = 0
    mass = np.bincount(j, weights=w, minlength=grid.size)
    keep = mass > 0.0
    return grid[keep], mass[keep] / mass[keep].sum()


def timing_accountant(config, *, d: int, common: dict, threat: str, draws: int | None = None):
    """The run accountant of FLORAS with ``phy.timing_offset`` > 0 and N > K (module docstring); ValueError naming the
    key where it is not derived; None after the checks inside validation
    (:func:`scenarios.config.schemes.checks_only`)."""
    import numpy as np

    from privacy import RunAccountant
    from privacy.sensitivity import release_sensitivity

    from .schemes import checks_only

    why = _refusal(config)
    if why is not None:
        raise ValueError(why)
    phy = config.phy
    from phy.floras_timing_law import law_link

    law_link(phy, K=int(config.training.clients_per_round), seed=int(config.run.seed))  # its refusals, cheap
    if checks_only():
        return None
    sens = release_sensitivity(normalization=phy.normalization, d=d, relation=config.privacy.relation,
                               level=config.privacy.level, C=phy.C if phy.C is None else float(phy.C),
                               power=float(phy.power), clip_norm=phy.clip_norm)
    S = sens.value
    values, weights, kappa = timing_law(config, draws=draws)
    strengths, w = coarsen(S * values, weights)
    inf_mass = float(w[-1]) if math.isinf(strengths[-1]) else 0.0
    m = TIMING_DRAWS if draws is None else int(draws)
    offsets = (f"chip-timing offsets τ_k ~ U(0, {float(phy.timing_offset):g}) chips" if phy.timing_offset != 0.0
               else "synchronous clients (no chip-timing offset), the law asked for by phy.floras.privacy_bound")
    law = (f"{offsets} (model §5.1, \"FLORAS's ε with offsets\": the law given the pilots): given the pilots, "
           f"gains, offsets and assignment (revealed to the observer) client k's round "
           f"is a Gaussian of strength μ = √Λ_k·S, S = {S:.6g} in units of ŝ/b; the law of √Λ from {m} Monte Carlo "
           f"rounds of i.i.d. Rayleigh gains (one uniformly chosen slot each, fixed stream), rounded up onto "
           f"geometric panels and made stochastically larger by one-sided Clopper–Pearson bounds (confidence "
           f"1 − {TIMING_BETA:g}), each capped by the receiver-noise bound √Λ ≤ κ·|g|, κ = {kappa:.6g}; "
           f"strengths rounded up onto a grid of ratio {MU_RATIO:g} from {MU_FLOOR:g}, those above {MU_CAP:g} counted as "
           f"infinite: mass {inf_mass:.3g} at μ = ∞")
    return RunAccountant("gaussian-mixture", **common, clip_norm=S / 2.0, strengths=tuple(strengths.tolist()),
                         weights=tuple(w.tolist()), law=law, sensitivity_text="sensitivity " + sens.derivation,
                         threat_model=threat + "; for the law given the pilots the pilots, gains, offsets and "
                                               "assignment are assumed known to the observer (model §5.1)")
