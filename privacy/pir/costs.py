"""Costs of one iteration of federated submodel learning with PIR against the naive scheme
(Kim & Lee §IV; model §9.6): symbols of F_q, channel uses (model §5), field multiplications.

Symbols per iteration (β = Σ_{k=1}^{r−1} N^{−k}, per-symbol rates: exact for any s as rates,
integral when N^r divides s):

    PIR scheme, download  r + s (exclusive data M_{t−1}) + s·(1 + β) (Sun–Jafar retrieval of one row)
                upload    r·s·N (masked update of every row to every database) + r + s (new exclusive data)
                total     2r + (3 + β + rN)·s
    naive       download  r·s (every row, r·s/N from each database); upload r·s·N; total r·s·(N + 1)

The "3" of the source's total is s (exclusive data down) + s (the PIR's own s) + s (exclusive
data up). With the project's "shared" exclusive data (additive shares of a_t, see
:mod:`privacy.pir.submodel`) the r of each exclusive transfer becomes N·r:
2N·r + (3 + β + rN)·s. The queries (index lists) are not in these totals.

The scheme wins on symbols exactly when naive − PIR = s·(r − 3 − β) − 2a > 0 (a = r, or N·r
shared): never when r ≤ 3 + β, else for s > s* = 2a/(r − 3 − β), with a tie at s = s*
(:func:`winning_threshold`; r = 4, N = 2: β = 7/8, s* = 64, or 128 shared).

Channel uses (model §5, digital uplink, a choice and an optimistic bound): bits = symbols·log2 q
sent error-free at the Shannon rate r(g) = ½·log2(1 + g·P/σ²) of the client's faded link,
g = |h|² ~ Exp(1) (Rayleigh), the client admitted only if g ≥ g_th. The expected airtime of an
admitted client is bits·E[1/r(g) | g ≥ g_th], computed by numerical integration (scipy quad)
of ∫_{g_th}^∞ e^{−g}/r(g) dg / e^{−g_th}; the ⌈·⌉ of model §5 adds less than one channel use per
transmission and is left out. Downloads use the same link model (a reciprocal link, a choice).

Client multiplications per iteration (training excluded): "mds" 2(r + s)² + s + 2r·s (decode and
encode M, correct the row, form U_t); "shared" 2s² + s + 2r·s. Databases only add. Naive: none
(it trains all r submodels instead of one).
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
from scipy import integrate


from .submodel import EXCLUSIVE_MODES, validate_parameters
from .sun_jafar import capacity_beta

__all__ = ["scheme_symbols", "naive_symbols", "winning_threshold", "smallest_winning_s", "client_multiplications", "expected_inverse_rate",
           "expected_channel_uses", "cost_row"]


def scheme_symbols(*, r: int, s: int, N: int, exclusive: str = "mds") -> dict:
    """Symbols per iteration of the PIR scheme: dict of exact Fractions (download, upload, total…)."""
    r, s, N = validate_parameters(r=r, s=s, N=N, exclusive=exclusive)
    beta = capacity_beta(r, N)
    a_size = r if exclusive == "mds" else N * r
    down_excl, down_pir = Fraction(a_size + s), s * (1 + beta)
    up_update, up_excl = Fraction(r * s * N), Fraction(a_size + s)
    return {"download_exclusive": down_excl, "download_pir": down_pir, "download": down_excl + down_pir,
            "upload_update": up_update, "upload_exclusive": up_excl, "upload": up_update + up_excl,
            "total": down_excl + down_pir + up_update + up_excl, "beta": beta}


def naive_symbols(*, r: int, s: int, N: int) -> dict:
    """Naive scheme: download r·s, upload r·s·N, total r·s·(N + 1)."""
    r, s, N = validate_parameters(r=r, s=s, N=N)
    return {"download": Fraction(r * s), "upload": Fraction(r * s * N), "total": Fraction(r * s * (N + 1))}


def winning_threshold(*, r: int, N: int, exclusive: str = "mds") -> Fraction | None:
    """s* = 2a/(r − 3 − β) [rows' length in symbols]: the PIR scheme costs fewer symbols than the naive one
    exactly when s > s* and the same at s = s* (a = r, "shared" a = N·r; β = Σ_{k=1}^{r−1} N^{−k}).

    From the totals above: naive − PIR = r·s·(N + 1) − 2a − (3 + β + rN)·s = s·(r − 3 − β) − 2a.
    None when r ≤ 3 + β (the scheme never wins; r ≤ 3 always, r = 4 needs β < 1, true for N ≥ 2).
    Exact (a Fraction); Kim & Lee §IV, model §9.6.
    """
    r, _, N = validate_parameters(r=r, s=1, N=N, exclusive=exclusive)
    slope = r - 3 - capacity_beta(r, N)
    if slope <= 0:
        return None
    a_size = r if exclusive == "mds" else N * r
    return Fraction(2 * a_size) / slope


def smallest_winning_s(*, r: int, N: int, exclusive: str = "mds") -> int | None:
    """The smallest integer s with a strict saving, ⌊s*⌋ + 1 (None when the scheme never wins)."""
    t = winning_threshold(r=r, N=N, exclusive=exclusive)
    return None if t is None else math.floor(t) + 1


def client_multiplications(*, r: int, s: int, exclusive: str = "mds") -> int:
    """Field multiplications of the PIR client per iteration (see module docstring)."""
    if exclusive not in EXCLUSIVE_MODES:
        raise ValueError(f"exclusive must be one of {EXCLUSIVE_MODES} (got {exclusive!r})")
    n = r + s if exclusive == "mds" else s
    return 2 * n * n + s + 2 * r * s


def _check_link(snr_db: float, g_th: float) -> float:
    if not np.isfinite(snr_db):
        raise ValueError(f"snr-db must be finite (got {snr_db!r})")
    if not (np.isfinite(g_th) and g_th > 0):
        raise ValueError(f"g-th must be a finite number > 0 (got {g_th!r})")
    return 10.0 ** (float(snr_db) / 10.0)


def expected_inverse_rate(*, snr_db: float, g_th: float, rate) -> float:
    """E[1/r(g) | g ≥ g_th] [channel uses per bit], g ~ Exp(1), by numerical integration.

    ``rate(g, snr_linear)`` is the link's rate [bits per real channel use] at gain |h|² = g — the
    digital uplink's Shannon rate ½·log2(1 + g·SNR) (model §5), passed in by the caller.
    """
    snr = _check_link(snr_db, g_th)
    val, err = integrate.quad(lambda g: math.exp(-(g - g_th)) / float(rate(g, snr)), g_th, np.inf,
                              epsabs=0.0, epsrel=1e-10, limit=200)
    return float(val)


def expected_channel_uses(symbols, *, symbol_bits: float, snr_db: float, g_th: float, rate) -> float:
    """Expected airtime [real channel uses] of ``symbols`` symbols of ``symbol_bits`` bits each."""
    return float(symbols) * float(symbol_bits) * expected_inverse_rate(snr_db=snr_db, g_th=g_th, rate=rate)


def cost_row(*, r: int, s: int, N: int, q: int, snr_db: float, g_th: float, rate) -> dict:
    """One row of the cost table: symbols, channel uses and multiplications of both schemes."""
    bits = math.log2(q)
    inv = expected_inverse_rate(snr_db=snr_db, g_th=g_th, rate=rate)
    row = {"r": r, "s": s, "N": N, "q": q, "symbol_bits": bits, "snr_db": snr_db, "g_th": g_th,
           "p_admitted": math.exp(-g_th), "channel_uses_per_bit": inv}
    naive = naive_symbols(r=r, s=s, N=N)
    for name, sym in (("pir", scheme_symbols(r=r, s=s, N=N)),
                      ("pir_shared", scheme_symbols(r=r, s=s, N=N, exclusive="shared")), ("naive", naive)):
        row[name] = {k: float(v) for k, v in sym.items()}
        row[name]["channel_uses"] = {k: float(sym[k]) * bits * inv for k in ("download", "upload", "total")}
    row["pir"]["client_mults"] = client_multiplications(r=r, s=s)
    row["pir_shared"]["client_mults"] = client_multiplications(r=r, s=s, exclusive="shared")
    row["naive"]["client_mults"] = 0
    row["pir"]["trained_submodels"] = row["pir_shared"]["trained_submodels"] = 1
    row["naive"]["trained_submodels"] = r
    row["difference"] = {"symbols_naive_minus_pir": float(naive["total"] - scheme_symbols(r=r, s=s, N=N)["total"]),
                         "channel_uses_naive_minus_pir": row["naive"]["channel_uses"]["total"]
                         - row["pir"]["channel_uses"]["total"]}
    return row
