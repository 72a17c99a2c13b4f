"""Frequency-selective fading over OFDM subcarriers from the TR 38.901 TDL profiles (model §5.1).

With ``phy.fading_correlation = "tdl"`` the B coherence blocks of an update (``phy.coherence_symbols`` = n_c
slots each, :func:`phy.coherence.coherence_plan`) are B OFDM subcarriers: block m rides on subcarrier m,
spaced Δf = ``phy.subcarrier_spacing`` [Hz], for the n_c OFDM symbols of the update (FLORAS with per-block
pilots: the first a pilot on every subcarrier, a block-type pilot arrangement). The channel is constant over
those symbols (the block fading in time of model §5) and selective in frequency: client k's gain on
subcarrier m is

    h̃_{k,m} = Σ_l a_{k,l}·exp(−j2π·m·Δf·τ_l),   a_{k,l} ~ CN(0, p_l) independent,   Σ_l p_l = 1,

the taps (τ_l [s], p_l) of the NLoS profiles TDL-A, TDL-B, TDL-C of TR 38.901 §7.7.2 (Tables 7.7.2-1 to -3),
normalized delays scaled by the delay spread DS = ``phy.delay_spread`` [s]. The profiles are read from
Sionna (``sionna.phy.channel.tr38901.TDL``) and their powers renormalized in float64. The vector is
circular Gaussian with

    R[m, m'] = E[h̃_{k,m}·h̃*_{k,m'}] = Σ_l p_l·exp(−j2π·(m − m')·Δf·τ_l),

so every block is CN(0, 1) (the marginal of model §5, which the per-block privacy bounds need) and blocks
decorrelate over the coherence bandwidth ≈ 1/DS. Drawn from the taps themselves (exact, K·L·B operations, no
B×B factor): block 0 is the round's draw h̃_{k,0} (:func:`phy.fading.draw_rayleigh`, so one block is the link of
model §5), and the taps are drawn from their law given their sum h̃_{k,0} = Σ_l a_{k,l},

    a_k = p·h̃_{k,0} + z_k − p·(Σ_l z_{k,l}),   z_{k,l} ~ CN(0, p_l) from the keyed stream (seed, "fading-tdl-taps", t),

whose mean is p·h̃_{k,0} and covariance diag(p) − p·pᵀ, the Gaussian conditional law (Cov(a, Σa) = p, Var Σa = 1);
then h̃_{k,m} = Σ_l a_{k,l}·exp(−j2π·m·Δf·τ_l).

The LoS profiles TDL-D and TDL-E (Tables 7.7.2-4, -5) split their first tap, at delay 0, into a specular
component of power P_LoS and a Rayleigh one. With the powers normalized to P_LoS + Σ_l p'_l = 1 (as Sionna does)
the gain on subcarrier m is

    h_{k,m} = √P_LoS·e^{jφ_k} + Σ_l a'_{k,l}·exp(−j2π·m·Δf·τ_l),   a'_{k,l} ~ CN(0, p'_l),

the specular part the same on every subcarrier (its delay is 0) and its phase φ_k ~ U(0, 2π) per round (block
fading in time: Sionna's Doppler term is constant over the update). That is the Rician law of
:mod:`phy.coherence` with κ = P_LoS/(1 − P_LoS) (:func:`los_k_factor`: 9.0 dB for TDL-D, 9.3 dB for TDL-E; the
standard's K₁ = 13.3 dB and 22 dB are P_LoS over the first tap's Rayleigh power alone) around the scattered taps
renormalized to Σ p = 1 (what :func:`tdl_profile` returns), so the NLoS draw above is reused as it is. Then

    R[m, m'] = κ/(κ + 1) + Σ_l p_l·exp(−j2π·(m − m')·Δf·τ_l)/(κ + 1)       (:func:`frequency_correlation`).

Doppler within the update (``phy.tdl_time_blocks`` = B_t > 1): each subcarrier carries B_t
consecutive blocks of n_c OFDM symbols, block j on subcarrier ⌊j/B_t⌋ in time block b = j mod B_t, and every tap is
a Clarke process in time (the Jakes spectrum Sionna's TDL gives its taps, taken exactly: a Gaussian process rather
than a sum of sinusoids), independent over taps and clients:

    a_{k,l}(b) with E[a_{k,l}(b)·a*_{k,l}(b')] = p_l·J₀(2π·f_D·T_s·n_c·(b − b')),   f_D·T_s = ``phy.doppler``,

given a_{k,l}(0) (the draw above) by the Gaussian conditional law of :func:`phy.coherence.draw_blocks`'s
"jakes-exact" (c, A from the J₀ matrix of the B_t time blocks) with innovations from the keyed stream
(seed, "fading-tdl-doppler", t). Then h̃_{k,m,b} = Σ_l a_{k,l}(b)·exp(−j2π·m·Δf·τ_l) and the correlation is
separable (derived):

    E[h̃_{k,m,b}·h̃*_{k,m',b'}] = J₀(2π·f_D·T_s·n_c·(b − b'))·Σ_l p_l·exp(−j2π·(m − m')·Δf·τ_l).

The symbols of one OFDM symbol see one channel (no inter-carrier interference: f_D ≪ Δf) and the channel is held
over each block of n_c OFDM symbols (block fading in time, as for "jakes-exact"). The LoS profiles' specular
component rotates with its own Doppler shift f_S = ``phy.los_doppler``·f_D (TR 38.901 §7.7.2: a Doppler peak at
f_S = 0.7·f_D; Sionna's TDL takes f_D·cos(π/4)), its phase advancing by ψ = f_S/f_D·2π·doppler·n_c per time block
(:func:`phy.coherence.draw_blocks`), so E[h_{k,m,b}·h*_{k,m',b'}] = κ/(κ+1)·e^{jψ·(b − b')} +
J₀(2π·f_D·T_s·n_c·(b − b'))·Σ_l p_l·exp(−j2π·(m − m')·Δf·τ_l)/(κ+1).
"""

from __future__ import annotations

import functools
import math

import numpy as np

__all__ = ["TDL_MODELS", "LOS_MODELS", "tdl_profile", "los_k_factor", "frequency_correlation", "subcarrier_gains"]

TDL_MODELS = ("A", "B", "C", "D", "E")  # TR 38.901 §7.7.2: A, B, C NLoS; D, E LoS
LOS_MODELS = ("D", "E")


@functools.lru_cache(maxsize=16)
def _sionna_profile(model: str, delay_spread: float) -> tuple[np.ndarray, np.ndarray, float]:
    """(τ [s], scattered powers, P_LoS) of Sionna's TDL-``model``, P_LoS + Σ powers = 1 (P_LoS = 0 for NLoS)."""
    if model not in TDL_MODELS:
        raise ValueError(f"tdl_model must be one of {{{', '.join(TDL_MODELS)}}} (got {model!r})")
    if not (isinstance(delay_spread, (int, float)) and math.isfinite(delay_spread) and delay_spread > 0):
        raise ValueError(f"delay_spread must be a finite number > 0 [s] (got {delay_spread!r})")
    from sionna.phy.channel.tr38901 import TDL

    # the carrier frequency only enters Sionna's Doppler, which this block-fading model does not use
    tdl = TDL(model, delay_spread=float(delay_spread), carrier_frequency=3.5e9)
    tau = np.asarray(tdl.delays, dtype=np.float64)
    p = np.asarray(tdl.mean_powers, dtype=np.float64)  # for LoS models the first tap holds the specular power too
    los = float(np.asarray(tdl.mean_power_los, dtype=np.float64)) if model in LOS_MODELS else 0.0
    if los:
        p = p.copy()
        p[0] -= los
    order = np.argsort(tau, kind="stable")
    return tau[order], p[order], los / (los + p.sum())


def tdl_profile(model: str, delay_spread: float) -> tuple[np.ndarray, np.ndarray]:
    """(τ [L] s, p [L]) of the scattered (Rayleigh) taps of TR 38.901 TDL-``model`` at delay spread ``delay_spread``
    [s]; Σ p = 1 in float64 (for TDL-D and -E without the specular component, :func:`los_k_factor`)."""
    tau, p, _ = _sionna_profile(model, float(delay_spread))
    return tau, p / p.sum()


def los_k_factor(model: str) -> float:
    """κ = P_LoS/(1 − P_LoS) of TDL-``model`` (0 for the NLoS profiles A, B, C): the specular power over all the
    scattered power (module doc; independent of the delay spread)."""
    _, _, los = _sionna_profile(model, 100e-9)
    return los / (1.0 - los)


def frequency_correlation(model: str, delay_spread: float, spacing: float, n_blocks: int) -> np.ndarray:
    """R [B, B] complex128, R[m, m'] = κ/(κ + 1) + Σ_l p_l·exp(−j2π·(m − m')·Δf·τ_l)/(κ + 1) (module doc; κ = 0 for
    the NLoS profiles)."""
    tau, p = tdl_profile(model, float(delay_spread))
    kappa = los_k_factor(model)
    lags = np.arange(int(n_blocks), dtype=np.float64)
    r = np.exp(-2j * math.pi * float(spacing) * lags[:, None] * tau[None, :]) @ p  # r[Δ] = R[m + Δ, m]
    r = (kappa + r) / (kappa + 1.0)
    delta = lags[:, None] - lags[None, :]
    idx = np.abs(delta).astype(np.int64)
    return np.where(delta >= 0, r[idx], np.conj(r[idx]))


def subcarrier_gains(h0: np.ndarray, *, seed: int, round_index: int, n_blocks: int, model: str, delay_spread: float,
                     spacing: float, time_blocks: int = 1, lag_x: float = 0.0, antenna: int = 0) -> np.ndarray:
    """h̃ [K, B] complex128 on the update's B blocks given block 0 ``h0`` [K] (module doc); column 0 is ``h0`` exactly.

    ``time_blocks`` = B_t: block j lies on subcarrier ⌊j/B_t⌋ and in time block j mod B_t, each tap a Clarke process
    in time with J₀(lag_x·Δ) between time blocks Δ apart (``lag_x`` = 2π·doppler·n_c, module doc "Doppler within
    the update"); B_t = 1 is the static draw, bit for bit.

    The scattered taps only (Σ p = 1); a LoS profile's specular part is added by :func:`phy.coherence.draw_blocks`
    with κ = :func:`los_k_factor`. ``antenna`` = r ≥ 1: receive antenna r's own taps (the streams' keys with r
    appended, independent of antenna 0's; model §5.2)."""
    from ..randomness import stream

    tau, p = tdl_profile(model, float(delay_spread))
    K, L, B_t = int(h0.shape[0]), int(tau.size), int(time_blocks)
    keys = (int(round_index),) if int(antenna) == 0 else (int(round_index), int(antenna))
    B_f = -(-int(n_blocks) // B_t)  # subcarriers
    z = stream(seed, "fading-tdl-taps", *keys).standard_normal((K, L, 2)) / math.sqrt(2.0)
    z = (z[..., 0] + 1j * z[..., 1]) * np.sqrt(p)[None, :]
    a = h0[:, None] * p[None, :] + z - z.sum(axis=1, keepdims=True) * p[None, :]
    phase = np.exp(-2j * math.pi * float(spacing) * np.outer(tau, np.arange(B_f, dtype=np.float64)))  # [L, B_f]
    if B_t == 1:
        h = a @ phase
    else:
        from ..coherence import clarke_factors

        c, A = clarke_factors(B_t, float(lag_x))
        w = stream(seed, "fading-tdl-doppler", *keys).standard_normal((K, L, B_t - 1, 2)) / math.sqrt(2.0)
        w = (w[..., 0] + 1j * w[..., 1]) * np.sqrt(p)[None, :, None]
        taps = np.empty((K, L, B_t), dtype=np.complex128)
        taps[:, :, 0] = a
        taps[:, :, 1:] = a[:, :, None] * c[None, None, :] + np.einsum("ij,klj->kli", A, w)
        h = np.einsum("klb,lm->kmb", taps, phase).reshape(K, B_f * B_t)[:, : int(n_blocks)]
    h[:, 0] = h0
    return h
