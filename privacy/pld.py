"""Privacy-loss-distribution (PLD) accounting through dp_accounting (model §9.4, §9.5).

:func:`event_pld` turns an event into a ``dp_accounting`` ``PrivacyLossDistribution`` built with
pessimistic discretization (the connect-the-dots construction of Doroshenko, Ghazi, Kamath,
Kumar & Manurangsi 2022, arXiv:2207.04380), so every ε it gives is an upper bound up to the
floating-point error of the FFT composition.

- Gaussian, unsampled or Poisson-sampled (add/remove; Koskela, Jälkö & Honkela 2020,
  arXiv:1906.03049, and dp_accounting's construction).
- FLORAS round (model §9.5): with V revealed the privacy loss of (V, ŝ/b) is that of ŝ/b given V,
  so the PLD is the V-mixture of Gaussian PLDs of standard deviation √V = γ/|Z|. The range of |Z|
  is cut into panels [z_i, z_{i+1}] of probability w_i = 2(Φ(z_{i+1}) − Φ(z_i)) and every V in a
  panel is replaced by the smallest one, γ²/z_{i+1}² (less noise dominates by post-processing:
  add the missing variance), so the mixture stays an upper bound; the tail |Z| > z_max goes to
  the infinite-loss mass (it adds at most T·2Φ̄(z_max) to δ over T rounds).
- Randomized response with ε₀ (binary, replace-one): dp_accounting's exact PLD; repeated rounds
  by ``self_compose`` (dp_accounting 0.6's ``PLDAccountant.compose(event, count)`` ignores count
  for randomized response, so the PLD object is used directly).
- FLORAS with B > 1 pilot blocks a round (one V_m per block): the mixture over V_min = min_m V_m, which dominates
  the round by post-processing (:func:`cauchy_mixture_pld`; model §9.5, "Several pilots").
- Sampling without replacement (replace-one) of a Gaussian or FLORAS round: the symmetric dominating pair of
  :mod:`privacy.pld_wor` (Dong, Roth & Su's C_q(f); model §9.5), V-mixed for FLORAS; other events: ValueError
  naming ``rdp``.
- Size: a Gaussian component whose loss range needs more than :data:`MAX_GRID_POINTS` points at
  the interval h (a noise far below its sensitivity, e.g. a calibration's bracket end at
  σ/S = 10⁻⁴: 5·10¹⁰ points, 373 GiB) raises :class:`PldTooLarge` before anything is
  allocated, and so does a composition whose FFT would pass :data:`MAX_COMPOSED_POINTS` (:func:`self_compose`);
  :func:`privacy.calibration.calibrate` counts such a point as missing its target.

Resolution (model §9.4): the interval h chosen from a target error by bracketing ε between the pessimistic and the
optimistic PLD is :mod:`privacy.pld_bracket`.
"""

from __future__ import annotations

import contextvars
import math

import numpy as np
from dp_accounting.pld import pld_pmf
from dp_accounting.pld import privacy_loss_distribution as _pld
from scipy.special import ndtr, ndtri

from privacy.report import int_at_least

__all__ = ["DEFAULT_DISCRETIZATION", "MAX_COMPOSED_POINTS", "MAX_GRID_POINTS", "PldTooLarge", "event_pld",
           "cauchy_mixture_pld", "mixture_pmf", "self_compose"]

#: Loss discretization interval of a PLD built without a target error, and the first one tried with one (nats;
#: :mod:`privacy.pld_bracket`).
DEFAULT_DISCRETIZATION = 1e-3

#: Most loss-grid points one Gaussian component may need. dp_accounting builds the connect-the-dots PMF through a
#: Python dictionary: about 170 bytes and 2 µs per point (measured: 7.96·10⁶ points, 1.39 GB peak, 17 s), so 2²⁴
#: points cost about 2.9 GB and 35 s per build and worker.
MAX_GRID_POINTS = 2**24
#: Most points the FFT of a T-fold composition may have (dp_accounting's ``self_convolve``: complex128 arrays of that
#: length, about three alive at once; 2²⁶ points are 1 GiB each). Without it a noise just above the per-round cap
#: asked for a 9.2·10⁸-point FFT (13.7 GiB) over 200 rounds and was killed for memory.
MAX_COMPOSED_POINTS = 2**26
#: dp_accounting's default tail mass cut by ``self_compose``.
_COMPOSE_TAIL = 1e-15

#: Which estimate the builders below make: dp_accounting's pessimistic (default) or optimistic one.
#: Set only by :func:`event_pld` for the duration of one build (the events' ``pld`` methods take no flag).
_PESSIMISTIC = contextvars.ContextVar("pld_pessimistic", default=True)
#: FLORAS mixture: panels in |Z| are geometric with this ratio between z_lo and z_max.
PANEL_RATIO = 1.05
Z_LO, Z_TAIL = 0.02, 6.7  # 2Φ̄(6.7) = 2.1e-11 per round into the infinite-loss mass


#: Why an event has no PLD here when its class gives none (the default of :meth:`PrivacyEvent.pld`).
NO_PLD = "no privacy-loss distribution is implemented for it"


def _unsupported(event, why: str) -> ValueError:
    """The ValueError for an event accountant pld cannot handle; ``pld_why`` lets a wrapper re-raise it under its name."""
    exc = ValueError(f"accountant pld does not support {type(event).__name__}: {why}; use --accountant rdp")
    exc.pld_why = why
    return exc


def tail_edge(blocks: int) -> float:
    """z_max of the mixture over B pilot blocks: B·2Φ̄(z_max) = 2Φ̄(6.7), the one-block tail (6.7 itself at B = 1)."""
    if blocks == 1:
        return Z_TAIL
    return float(-ndtri(float(ndtr(-Z_TAIL)) / blocks))


def max_abs_normal_cdf(z, blocks: int):
    """P(max_m |Z_m| ≤ z) = (2Φ(z) − 1)^B for B independent standard normals (model §9.5, "Several pilots")."""
    return (2.0 * ndtr(np.asarray(z, dtype=np.float64)) - 1.0) ** int(blocks)


def cauchy_mixture_pld(*, sensitivity: float, gamma: float, rate: float = 1.0,
                       discretization: float = DEFAULT_DISCRETIZATION, sampling: str = "poisson", blocks: int = 1,
                       antennas: int = 1):
    """PLD of the FLORAS round as a pessimistic V-mixture: ``sampling`` "poisson" (rate ``rate``, add/remove; 1:
    unsampled) or "without-replacement" (K/M = ``rate``, replace-one: every panel the symmetric pair of
    :mod:`privacy.pld_wor`).

    ``blocks`` B > 1 pilot blocks (model §9.5, "Several pilots"): block m's entries carry N(0, V_m), V_m = γ²/Z_m²
    independent. Given V the release is the post-processing of the same release with V_min = min_m V_m on every entry
    (add N(0, V_m − V_min) to block m, independent of the data), so the round is dominated by the mixture over
    V_min = γ²/max_m Z_m², whose |Z| law is (2Φ(z) − 1)^B; the panels and the tail are those of B = 1 with these
    weights, z_max from :func:`tail_edge` (the same tail mass per round).

    ``antennas`` N_r > 1 receive antennas (maximum-ratio combiner; model §9.5, "Several antennas"):
    V = Σ_j 1/χ²_{N_r,j} over the γ inactive sequences, whose pessimistic law on a grid
    (:func:`privacy.antenna_noise.noise_law`) gives the panels' weights in z = γ/√V and the tail edge; with B > 1
    pilot blocks the law of V_min = min_m V_m on that grid (the argument above; model §5.2, "Antennas over
    coherence blocks").
    """
    if sampling not in ("poisson", "without-replacement"):
        raise ValueError(f"sampling must be 'poisson' or 'without-replacement' (got {sampling!r})")
    blocks, antennas = int_at_least("blocks", blocks, 1), int_at_least("antennas", antennas, 1)
    S, g = float(sensitivity), float(gamma)
    pess = _PESSIMISTIC.get()
    wor = sampling == "without-replacement" and rate < 1.0
    if S == 0.0:
        return _pld.identity(discretization)
    law = None
    if antennas > 1 and g > 0.0:
        from privacy.antenna_noise import noise_law

        law = noise_law(g, antennas, blocks)
    z_max = law.z_max if law is not None else tail_edge(int(blocks))
    edges = np.concatenate([[0.0], np.geomspace(Z_LO, z_max, int(math.ceil(math.log(z_max / Z_LO) / math.log(PANEL_RATIO))) + 1)])
    if law is not None:  # N_r > 1: the grid law's lower bound on the CDF of z
        weights = np.diff(law.cdf_z(edges))
        tail = law.tail
    elif blocks == 1:  # the one-pilot mixture, bit for bit as before
        cdf = ndtr(edges)
        weights = 2.0 * np.diff(cdf)
        tail = 2.0 * float(ndtr(-Z_TAIL))
    else:
        cdf = max_abs_normal_cdf(edges, int(blocks))
        weights = np.diff(cdf)
        tail = float(-np.expm1(int(blocks) * np.log1p(-2.0 * ndtr(-z_max))))  # 1 − (1 − 2Φ̄(z_max))^B
    if g == 0.0:
        tail, weights = 1.0, weights * 0.0
    if g > 0.0:  # the last panel (the least noise, γ/z_max) has the widest loss grid: check it before building any
        _check_grid(g / edges[-1], S, float(rate), float(discretization), symmetric=wor)
    parts_remove, parts_add = [], []
    for w, z in zip(weights, edges[1:]):
        if w <= 0.0:
            continue
        if wor:
            from privacy.pld_wor import wor_gaussian_pmf

            parts_remove.append((w, wor_gaussian_pmf(g / z, sensitivity=S, rate=float(rate),
                                                     discretization=discretization, pessimistic=pess)))
            continue
        p = _pld.from_gaussian_mechanism(g / z, sensitivity=S, sampling_prob=rate, pessimistic_estimate=pess,
                                         value_discretization_interval=discretization, use_connect_dots=pess)
        parts_remove.append((w, p._pmf_remove.to_dense_pmf()))
        parts_add.append((w, p._pmf_add.to_dense_pmf()))

    def mixture(parts):
        return mixture_pmf(parts, discretization=discretization, pessimistic=pess, tail=tail)

    if wor:  # one symmetric pair (privacy.pld_wor)
        return _pld.PrivacyLossDistribution(mixture(parts_remove))
    return _pld.PrivacyLossDistribution(mixture(parts_remove), mixture(parts_add))


def mixture_pmf(parts, *, discretization: float, pessimistic: bool, tail: float = 0.0):
    """Σ_i w_i·pmf_i + tail·δ_∞ on one dense loss grid: ``parts`` (w_i, a DensePLDPmf on the grid ``discretization``),
    weights summing to 1 − ``tail``; no parts: all mass at infinite loss. The PMF of a round that is pmf_i with
    probability w_i, i revealed (each component's infinite mass weighted alike)."""
    if not parts:
        return pld_pmf.DensePLDPmf(discretization, 0, np.zeros(1), 1.0, pessimistic)
    lo = min(d._lower_loss for _, d in parts)
    hi = max(d._lower_loss + d.size for _, d in parts)
    probs = np.zeros(hi - lo)
    inf_mass = tail
    for w, d in parts:
        probs[d._lower_loss - lo: d._lower_loss - lo + d.size] += w * d._probs
        inf_mass += w * d._infinity_mass
    return pld_pmf.DensePLDPmf(discretization, lo, probs, inf_mass, pessimistic)


class PldTooLarge(ValueError):
    """A PLD whose loss grid would exceed :data:`MAX_GRID_POINTS` (the message names σ, S, the rate and h)."""


def _check_grid(std: float, sensitivity: float, rate: float, discretization: float, *, symmetric: bool = False) -> None:
    """Raise :class:`PldTooLarge` when the Gaussian PLD of (σ, S, q) needs more than MAX_GRID_POINTS points at h.

    The count is dp_accounting's own: its loss range (``connect_dots_bounds`` of each adjacency, the same
    truncation as ``from_gaussian_mechanism``) divided by h; computing it allocates nothing.
    """
    from dp_accounting.pld import privacy_loss_mechanism as plm

    points = 0.0
    for adjacency in (plm.AdjacencyType.REMOVE, plm.AdjacencyType.ADD):
        b = plm.GaussianPrivacyLoss(std, sensitivity=sensitivity, sampling_prob=rate,
                                    adjacency_type=adjacency).connect_dots_bounds()
        width = (2.0 * max(abs(float(b.epsilon_upper)), abs(float(b.epsilon_lower))) if symmetric
                 else float(b.epsilon_upper) - float(b.epsilon_lower))  # the symmetric pair's grid: ±the largest |loss|
        points = max(points, width / discretization)
    if not points <= MAX_GRID_POINTS:
        raise PldTooLarge(f"the PLD of a Gaussian with noise std {std:.4g} at sensitivity {sensitivity:.4g} (sampling "
                          f"rate {rate:g}) needs {points:.3g} loss points at discretization {discretization:g}, above "
                          f"{MAX_GRID_POINTS} (the loss range grows as (S/σ)²): such a weak noise has ε far above "
                          "any usual target; use a larger noise, or accountant rdp")


def self_compose(pld, count: int):
    """``pld`` composed with itself ``count`` times (dp_accounting's FFT), or :class:`PldTooLarge` when the FFT would
    need more than :data:`MAX_COMPOSED_POINTS` points. The length is dp_accounting's own: its Chernoff truncation
    bounds (``compute_self_convolve_bounds``) for each dense PMF whose untruncated length (n − 1)·count + 1 passes the
    cap; nothing is allocated but those bounds."""
    from dp_accounting.pld import common
    from scipy import fft

    count = int(count)
    for pmf in {id(p): p for p in (pld._pmf_remove, pld._pmf_add)}.values():  # one object when symmetric
        probs = getattr(pmf, "_probs", None)  # a sparse PMF composes by dictionary: no FFT
        if probs is None or (len(probs) - 1) * count + 1 <= MAX_COMPOSED_POINTS:
            continue
        lo, hi = common.compute_self_convolve_bounds(probs, count, _COMPOSE_TAIL)
        size = fft.next_fast_len(max(hi - lo + 1, len(probs)))
        if size > MAX_COMPOSED_POINTS:
            raise PldTooLarge(f"composing a PLD of {len(probs)} loss points {count} times needs an FFT of {size:.3g} "
                              f"points, above {MAX_COMPOSED_POINTS} ({16 * size / 2**30:.1f} GiB per array): the "
                              "privacy loss spreads too wide over the rounds (a weak noise, or very many rounds); use "
                              "a larger noise, a coarser pld discretization, or accountant rdp")
    if count >= 1 and max(p._infinity_mass for p in (pld._pmf_remove, pld._pmf_add)) >= 1.0 - 1e-12:
        return pld  # every round's loss is ∞ (e.g. FLORAS with γ = 0): so is T rounds' (dp_accounting's log1p(−1) fails)
    return pld.self_compose(count, tail_mass_truncation=_COMPOSE_TAIL)


def gaussian_round_pld(event, *, rate: float, discretization: float, sampling: str = "poisson"):
    """PLD of a :class:`privacy.events.GaussianRound`, Poisson-sampled at ``rate`` (1: unsampled), or sampled without
    replacement at K/M = ``rate`` (``sampling = "without-replacement"``, replace-one: :mod:`privacy.pld_wor`)."""
    if event.sensitivity == 0:
        return _pld.identity(discretization)
    if event.noise_std == 0:
        raise _unsupported(event, "a Gaussian without noise has ε = ∞")
    wor = sampling == "without-replacement" and rate < 1.0
    _check_grid(float(event.noise_std), float(event.sensitivity), float(rate), float(discretization), symmetric=wor)
    if wor:
        from privacy.pld_wor import wor_gaussian_pld

        return wor_gaussian_pld(event.noise_std, sensitivity=event.sensitivity, rate=float(rate),
                                discretization=discretization, pessimistic=_PESSIMISTIC.get())
    return _pld.from_gaussian_mechanism(event.noise_std, sensitivity=event.sensitivity, sampling_prob=rate,
                                        pessimistic_estimate=_PESSIMISTIC.get(), use_connect_dots=_PESSIMISTIC.get(),
                                        value_discretization_interval=discretization)


def cauchy_round_pld(event, *, rate: float, discretization: float, sampling: str = "poisson"):
    """PLD of a :class:`privacy.events.CauchyRound` (the V-mixture; not the exact scalar release)."""
    if event.scalar:
        raise _unsupported(event, "the exact scalar Cauchy release")
    return cauchy_mixture_pld(sensitivity=event.sensitivity, gamma=event.gamma, rate=rate, discretization=discretization,
                              sampling=sampling, blocks=event.blocks, antennas=event.antennas)


def randomized_response_pld(event, *, rate: float, discretization: float):
    """PLD of a :class:`privacy.events.RandomizedResponseRound` (unsampled only)."""
    if rate != 1.0:
        raise _unsupported(event, NO_PLD)
    if event.epsilon0 == 0:
        return _pld.identity(discretization)
    return _pld.from_randomized_response(2.0 / (1.0 + math.exp(event.epsilon0)), 2,
                                         pessimistic_estimate=_PESSIMISTIC.get(), value_discretization_interval=discretization)


def event_pld(event, *, discretization: float = DEFAULT_DISCRETIZATION, pessimistic: bool = True):
    """The PLD of one event (see the module doc for what is supported).

    The wrappers are handled here; a leaf event (or one Poisson-sampled) gives its own
    :meth:`~privacy.events.PrivacyEvent.pld`. Errors name the event passed in (the wrapper).
    ``pessimistic`` False builds dp_accounting's optimistic estimate (losses rounded down: a lower
    bound on ε up to the FFT's rounding), the lower end of :func:`privacy.pld_bracket.epsilon_bracket`.
    """
    if not isinstance(pessimistic, bool):
        raise ValueError(f"pessimistic must be True or False (got {pessimistic!r})")
    token = _PESSIMISTIC.set(pessimistic)
    try:
        return _event_pld(event, discretization)
    finally:
        _PESSIMISTIC.reset(token)


def _event_pld(event, discretization: float):
    from privacy.events import Composed, PoissonSampled, PrivacyEvent, SampledWithoutReplacement, SelfComposed

    h = discretization
    wrappers = (SampledWithoutReplacement, PoissonSampled, SelfComposed, Composed)
    if isinstance(event, SampledWithoutReplacement):
        if event.rate < 1.0:
            return _without_replacement_pld(event, h)
        return _event_pld(event.event, h)
    if isinstance(event, SelfComposed):
        if event.count == 0:
            return _pld.identity(h)
        return self_compose(_event_pld(event.event, h), event.count)
    if isinstance(event, Composed):
        out = _pld.identity(h)
        for e in event.events:
            out = out.compose(_event_pld(e, h))
        return out
    rate, inner = (event.rate, event.event) if isinstance(event, PoissonSampled) else (1.0, event)
    if not isinstance(inner, PrivacyEvent) or isinstance(inner, wrappers):
        raise _unsupported(event, NO_PLD)
    try:
        return inner.pld(rate=rate, discretization=h)
    except ValueError as exc:
        if inner is event or not hasattr(exc, "pld_why"):
            raise
        raise _unsupported(event, exc.pld_why) from None


def _without_replacement_pld(event, h: float):
    """A Gaussian or FLORAS round sampled without replacement (replace-one): the symmetric pair of
    :mod:`privacy.pld_wor` (given V for FLORAS); anything else has no construction here."""
    from privacy.events import CauchyRound, GaussianRound

    inner = event.event
    if isinstance(inner, GaussianRound):
        return gaussian_round_pld(inner, rate=event.rate, discretization=h, sampling="without-replacement")
    if isinstance(inner, CauchyRound):
        try:
            return cauchy_round_pld(inner, rate=event.rate, discretization=h, sampling="without-replacement")
        except ValueError as exc:
            if not hasattr(exc, "pld_why"):
                raise
            raise _unsupported(event, exc.pld_why) from None
    if hasattr(inner, "wor_pld"):  # a leaf event with its own construction (privacy.gaussian_mixture)
        return inner.wor_pld(rate=event.rate, discretization=h)
    raise _unsupported(event, f"sampling without replacement has a PLD here for Gaussian, Gaussian-mixture and FLORAS "
                              f"rounds only, not {type(inner).__name__}")
