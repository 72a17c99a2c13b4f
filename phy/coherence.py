"""Small-scale fading over coherence blocks inside one update (model §5.1).

The d + 1 slots of a FLORAS update (or the d symbols of an analog one) are cut into coherence blocks of
n_c = ``phy.coherence_symbols`` slots; the small-scale fading h̃_{k,m} is constant within block m and
changes between blocks:

- ``fading_correlation = "iid"``: h̃_{k,m} i.i.d. CN(0, 1) over blocks;
- ``"jakes"``: first-order Gauss–Markov (AR(1)) h̃_{k,m} = ρ·h̃_{k,m−1} + √(1 − ρ²)·w_{k,m}, w ~ CN(0, 1),
  with ρ = J₀(2π·f_D·T_s·n_c) (``doppler`` = f_D·T_s): the Jakes correlation between consecutive blocks
  (blocks Δ apart correlate as ρ^Δ, an approximation of J₀(2π f_D T_s n_c Δ));
- ``"jakes-exact"``: the Clarke/Jakes process sampled at the block starts, E[h̃_{k,m}·h̃*_{k,m'}] =
  J₀(2π·f_D·T_s·n_c·|m − m'|) at every lag: given block 0, h̃_{k,1:} = c·h̃_{k,0} + A·w_k with c = R[1:, 0] and
  A·Aᵀ = R[1:, 1:] − c·cᵀ (the Gaussian conditional law; A from an eigendecomposition, computed once per (B, lag
  step)), w ~ CN(0, I) from the same stream as above; at most :data:`MAX_EXACT_BLOCKS` blocks.
- ``"tdl"``: the blocks are OFDM subcarriers of a TR 38.901 TDL channel (:mod:`phy.channels.tdl`):
  E[h̃_{k,m}·h̃*_{k,m'}] = Σ_l p_l·exp(−j2π·(m − m')·Δf·τ_l), drawn from the taps given block 0 (any B); with
  ``tdl_time_blocks`` = B_t > 1, B_t consecutive blocks per subcarrier and the taps a Clarke process over them.

Block 0 is the round's Sionna draw :func:`phy.fading.draw_rayleigh` (so one block reproduces model §5 bit
for bit); the innovations w_{k,m}, m ≥ 1, come from the keyed stream ``(seed, "fading-blocks", t)`` as one
[B − 1, K, 2] standard-normal array (real, imaginary)/√2.

Rician fading (κ = ``rician_k`` > 0): h_{k,m} = √(κ/(κ+1))·e^{j(φ_k + ψ·b_m)} + √(1/(κ+1))·h̃_{k,m}, φ_k ~ U(0, 2π)
per round from ``(seed, "fading-los-phase", t)`` (E|h|² = 1). With the LoS TDL profiles (D, E) κ is the profile's
own (:func:`phy.channels.tdl.los_k_factor`, ``PhyConfig.los_k``) and h̃ the scattered taps: the specular component
lies at delay 0, the same on every subcarrier. The line of sight's Doppler shift f_S = ``los_doppler``·f_D (TR 38.901
§7.7.2: f_S = 0.7·f_D) advances its phase by ψ = 2π·f_S·T_s·n_c = ``los_doppler``·x per block in time, x =
:func:`lag_step`; b_m is block m's index in time (m for "jakes" and "jakes-exact", m mod B_t for "tdl" with
``tdl_time_blocks`` = B_t, and ψ = 0 where the blocks are not in time: "iid", "tdl" with B_t = 1). Then, derived,

    E[h_{k,m}·h*_{k,m'}] = κ/(κ+1)·e^{jψ·(b_m − b_m')} + E[h̃_{k,m}·h̃*_{k,m'}]/(κ+1).

Block layout (:func:`coherence_plan`), entry i = 0..d−1 of the update:

- FLORAS with ``pilots = "per-block"``: every block is one reference slot and n_c − 1 data slots (n_c ≥ 2),
  B = ⌈d/(n_c − 1)⌉ blocks and B reference slots; entry i lies in block ⌊i/(n_c − 1)⌋ and uses its pilot;
- ``pilots = "stale"``: one reference slot (slot 0) for the update; entry i is slot i + 1, in block
  ⌊(i + 1)/n_c⌋ of B = ⌈(d + 1)/n_c⌉, and is equalised with block 0's pilot.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np

from .fading import draw_rayleigh
from .randomness import stream

__all__ = ["CORRELATIONS", "PILOT_MODES", "MAX_EXACT_BLOCKS", "CoherencePlan", "coherence_plan", "block_correlation",
           "lag_step", "check_exact_blocks", "clarke_factors", "draw_blocks", "block0_correlations", "los_phasors"]

CORRELATIONS = ("iid", "jakes", "jakes-exact", "tdl")
MAX_EXACT_BLOCKS = 4096  # "jakes-exact" holds a B×B factor: 128 MB at this size
PILOT_MODES = ("per-block", "stale")


@dataclass(frozen=True)
class CoherencePlan:
    """Where each of the d entries lies: fading block ``fade`` [d], pilot block ``pilot`` [d]; B blocks, P pilots.

    ``segments``: (a, z, m, p) runs of entries a..z−1 sharing fading block m and pilot p.
    """

    d: int
    n_blocks: int
    n_pilots: int
    segments: tuple

    @property
    def single(self) -> bool:
        return self.n_blocks == 1

    def indices(self) -> tuple[np.ndarray, np.ndarray]:
        """(fading block [d] int64, pilot [d] int64) of every entry."""
        lengths = [z - a for a, z, _, _ in self.segments]
        fade = np.repeat(np.array([m for *_, m, _ in self.segments], dtype=np.int64), lengths)
        pilot = np.repeat(np.array([p for *_, p in self.segments], dtype=np.int64), lengths)
        return fade, pilot

    def pilot_share(self) -> np.ndarray:
        """[P] the fraction of the d entries equalised with each pilot."""
        share = np.zeros(self.n_pilots)
        for a, z, _, p in self.segments:
            share[p] += z - a
        return share / max(self.d, 1)


def coherence_plan(d: int, n_c: int | None, pilots: str = "per-block") -> CoherencePlan:
    """The block layout of an update of d entries (model §5.1); n_c None: one block, one pilot."""
    d = int(d)
    if n_c is None or (pilots == "per-block" and n_c - 1 >= d) or (pilots == "stale" and n_c >= d + 1):
        return CoherencePlan(d, 1, 1, ((0, d, 0, 0),))
    if pilots == "per-block":
        if n_c < 2:
            raise ValueError(f"coherence_symbols must be ≥ 2 with pilots = 'per-block' (a pilot and a data slot; got {n_c})")
        q = n_c - 1
        B = -(-d // q)
        segs = tuple((m * q, min((m + 1) * q, d), m, m) for m in range(B))
        return CoherencePlan(d, B, B, segs)
    if pilots == "stale":
        B = -(-(d + 1) // n_c)
        segs = tuple((max(m * n_c - 1, 0), min((m + 1) * n_c - 1, d), m, 0) for m in range(B))
        return CoherencePlan(d, B, 1, tuple(s for s in segs if s[1] > s[0]))
    raise ValueError(f"pilots must be one of {{{', '.join(PILOT_MODES)}}} (got {pilots!r})")


def block_correlation(config) -> float:
    """ρ between consecutive blocks: 0 ("iid"), J₀(2π·doppler·n_c) ("jakes", "jakes-exact"), or |R[1, 0]| between
    neighbouring subcarriers ("tdl", :mod:`phy.channels.tdl`)."""
    if config.fading_correlation == "iid" or config.coherence_symbols is None:
        return 0.0
    if config.fading_correlation == "tdl":
        from .channels.tdl import frequency_correlation

        R = frequency_correlation(config.tdl_model, float(config.delay_spread), float(config.subcarrier_spacing), 2)
        return float(abs(R[1, 0]))
    from scipy.special import j0

    return float(j0(2.0 * math.pi * float(config.doppler) * int(config.coherence_symbols)))


def lag_step(config) -> float:
    """x = 2π·doppler·n_c [rad]: the argument of J₀ per block of lag (0 without coherence blocks)."""
    if config.coherence_symbols is None:
        return 0.0
    return 2.0 * math.pi * float(config.doppler) * int(config.coherence_symbols)


def los_block_phases(config, n_blocks: int) -> np.ndarray:
    """ψ·b_m [B] [rad]: the line of sight's phase turn from block 0 to block m (module doc: ψ = ``los_doppler``·x per
    block in time, b_m the block's index in time; 0 without a line of sight or without blocks in time), as
    :class:`phy.link_channel.LinkChannel` draws it."""
    m = np.arange(int(n_blocks), dtype=np.float64)
    if not float(config.los_k) or not config.blocks_in_time:
        return np.zeros(m.size)
    psi = float(config.los_doppler_ratio) * lag_step(config)
    if config.fading_correlation == "tdl":
        return psi * np.mod(m, int(config.tdl_time_blocks))
    return psi * m


def block0_correlations(config, n_blocks: int) -> np.ndarray:
    """r [B] complex128, r_m = E[h̃_{k,m}·h̃*_{k,0}]: each block's correlation with block 0 under the law
    :func:`draw_blocks` draws (module doc; the scattered part, unit power): 1, 0, 0, … ("iid", or no coherence
    blocks); ρ^m ("jakes", the AR(1)); J₀(x·m) ("jakes-exact", x = :func:`lag_step`); with "tdl", block m on
    subcarrier ⌊m/B_t⌋ and in time block m mod B_t, Σ_l p_l·exp(−j2π·⌊m/B_t⌋·Δf·τ_l)·J₀(x·(m mod B_t)) (independent
    taps, each a Clarke process in time; the NLoS profiles' taps, :func:`phy.channels.tdl.tdl_profile`). What a
    stale pilot's factor law needs (model §5.1, §7.2 "Link level")."""
    from scipy.special import j0

    B = int(n_blocks)
    if B < 1:
        raise ValueError(f"n_blocks must be ≥ 1 (got {n_blocks!r})")
    m = np.arange(B, dtype=np.float64)
    if config.fading_correlation == "iid" or config.coherence_symbols is None:
        return (m == 0).astype(np.complex128)
    if config.fading_correlation == "jakes":
        return (block_correlation(config) ** m).astype(np.complex128)
    if config.fading_correlation == "jakes-exact":
        return j0(lag_step(config) * m).astype(np.complex128)
    if config.fading_correlation == "tdl":
        from .channels.tdl import tdl_profile

        tau, p = tdl_profile(config.tdl_model, float(config.delay_spread))
        bt = int(config.tdl_time_blocks)
        sub, tim = np.floor_divide(m, bt), np.mod(m, bt)
        x = lag_step(config) if bt > 1 else 0.0
        freq = np.exp(-2j * math.pi * float(config.subcarrier_spacing) * sub[:, None] * tau[None, :]) @ p
        return freq * j0(x * tim)
    raise ValueError(f"fading_correlation must be one of {{{', '.join(CORRELATIONS)}}} (got {config.fading_correlation!r})")


def check_exact_blocks(config, d: int) -> None:
    """``jakes-exact`` holds a B×B factor: refuse an update whose blocks (at most ⌈(d + 1)/(n_c − 1)⌉) exceed the cap."""
    if config.fading_correlation != "jakes-exact" or config.coherence_symbols is None:
        return
    n_c = int(config.coherence_symbols)
    most = -(-(int(d) + 1) // max(n_c - 1, 1))
    if most > MAX_EXACT_BLOCKS:
        raise ValueError(f"fading_correlation = 'jakes-exact' draws the blocks' joint law (a B×B factor): up to {most} blocks "
                         f"for d = {d} and coherence_symbols = {n_c}, more than {MAX_EXACT_BLOCKS}; raise "
                         f"coherence_symbols to at least {-(-(int(d) + 1) // MAX_EXACT_BLOCKS) + 1} or use 'jakes' (AR(1))")


@functools.lru_cache(maxsize=8)
def clarke_factors(n_blocks: int, x: float) -> tuple[np.ndarray, np.ndarray]:
    """(c [B−1], A [B−1, B−1]) of the Clarke process given block 0: R = J₀(x·|m − m'|), c = R[1:, 0],
    A·Aᵀ = R[1:, 1:] − c·cᵀ (eigendecomposition; rounding's tiny negative eigenvalues set to 0)."""
    from scipy.special import j0

    lags = np.arange(n_blocks, dtype=np.float64)
    R = j0(x * np.abs(lags[:, None] - lags[None, :]))
    c = R[1:, 0].copy()
    vals, vecs = np.linalg.eigh(R[1:, 1:] - np.outer(c, c))
    return c, vecs * np.sqrt(np.clip(vals, 0.0, None))


def draw_blocks(seed: int, round_index: int, *, K: int, n_blocks: int, correlation: str = "iid", rho: float = 0.0,
                rician_k: float = 0.0, lag_x: float = 0.0, tdl: tuple | None = None,
                los_step: float = 0.0, antenna: int = 0, h0: np.ndarray | None = None) -> np.ndarray:
    """Small-scale fading h [K, B] complex128 of one round (E|h|² = 1), column 0 = :func:`draw_rayleigh`.

    ``rho``: the AR(1) coefficient ("jakes"); ``lag_x``: 2π·f_D·T_s·n_c ("jakes-exact", :func:`lag_step`);
    ``tdl``: (model, delay spread [s], subcarrier spacing [Hz][, time blocks B_t, 2π·doppler·n_c]) of the "tdl"
    subcarriers (:func:`phy.channels.tdl.subcarrier_gains`); ``los_step``: ψ [rad], the line of sight's phase
    advance per block in time (module doc; 0: constant over the round, as before the option existed).

    ``antenna`` = r ≥ 1 with ``h0`` [K] (its block-0 draw, :func:`phy.fading.draw_rayleigh_antennas`'s column r):
    receive antenna r's blocks (model §5.2, "Antennas over coherence blocks"), the same law with its innovations
    from the keyed streams of the purposes above with r appended, so every antenna is an independent process;
    antenna 0 is the draw above (no ``h0``). Rayleigh only (the configuration refuses Rician fading with N_r > 1)."""
    t = int(round_index)
    r = int(antenna)
    if (r == 0) != (h0 is None) or (r > 0 and rician_k > 0):
        raise ValueError(f"draw_blocks: antenna {r} needs its block-0 draw h0 exactly when r ≥ 1, and Rayleigh fading")
    keys = (t,) if r == 0 else (t, r)
    h = np.empty((int(K), int(n_blocks)), dtype=np.complex128)
    h[:, 0] = draw_rayleigh(seed, t, K=K) if h0 is None else np.asarray(h0, dtype=np.complex128)
    if correlation == "tdl" and n_blocks > 1:
        from .channels.tdl import subcarrier_gains

        if tdl is None:
            raise ValueError("fading_correlation = 'tdl' needs its profile (tdl=(model, delay_spread, subcarrier_spacing))")
        model, spread, spacing, *time = tdl
        time_blocks, x = time if time else (1, 0.0)
        h = subcarrier_gains(h[:, 0], seed=seed, round_index=t, n_blocks=int(n_blocks), model=model,
                             delay_spread=float(spread), spacing=float(spacing), time_blocks=int(time_blocks),
                             lag_x=float(x), antenna=r)
    elif n_blocks > 1:
        w = stream(seed, "fading-blocks", *keys).standard_normal((n_blocks - 1, K, 2)) / math.sqrt(2.0)
        w = w[..., 0] + 1j * w[..., 1]
        if correlation == "iid":
            h[:, 1:] = w.T
        elif correlation == "jakes":
            a = math.sqrt(max(0.0, 1.0 - rho * rho))
            for m in range(1, n_blocks):
                h[:, m] = rho * h[:, m - 1] + a * w[m - 1]
        elif correlation == "jakes-exact":
            if n_blocks > MAX_EXACT_BLOCKS:
                raise ValueError(f"fading_correlation = 'jakes-exact' takes at most {MAX_EXACT_BLOCKS} blocks (got {n_blocks}); "
                                 "raise coherence_symbols or use 'jakes'")
            c, A = clarke_factors(int(n_blocks), float(lag_x))
            h[:, 1:] = h[:, :1] * c[None, :] + (A @ w).T
        else:
            raise ValueError(f"fading_correlation must be one of {{{', '.join(CORRELATIONS)}}} (got {correlation!r})")
    if rician_k > 0:
        los = los_phasors(seed, t, K=K, n_blocks=n_blocks, correlation=correlation, tdl=tdl, los_step=los_step)
        h = math.sqrt(rician_k / (rician_k + 1.0)) * los + math.sqrt(1.0 / (rician_k + 1.0)) * h
    return h


def los_phasors(seed: int, round_index: int, *, K: int, n_blocks: int, correlation: str = "iid",
                tdl: tuple | None = None, los_step: float = 0.0) -> np.ndarray:
    """e^{j(φ_k + ψ·b_m)} [K, B] complex128: the line of sight's phase of client k in block m (module doc), φ_k ~ U(0, 2π)
    from ``(seed, "fading-los-phase", t)``, ψ = ``los_step`` per block in time (b_m as :func:`draw_blocks` states)."""
    t = int(round_index)
    phi = 2.0 * math.pi * stream(seed, "fading-los-phase", t).random(K)
    los = np.exp(1j * phi)[:, None]
    if los_step != 0.0 and n_blocks > 1:
        if correlation in ("jakes", "jakes-exact"):
            b = np.arange(n_blocks, dtype=np.float64)
        elif correlation == "tdl" and tdl is not None and len(tdl) > 3 and int(tdl[3]) > 1:
            b = (np.arange(n_blocks) % int(tdl[3])).astype(np.float64)
        else:
            raise ValueError(f"los_step = {los_step!r}: the line of sight rotates only over blocks in time "
                             "('jakes', 'jakes-exact', or 'tdl' with time blocks)")
        los = los * np.exp(1j * float(los_step) * b)[None, :]
    return np.broadcast_to(los, (int(K), int(n_blocks)))
