"""Physical-layer configuration (model §3–§6), validated in one place.

All fields are plain typed values so the configuration loads from TOML. ``validate(K=, d=)``
checks everything that depends on the number of scheduled clients K and the model
dimension d, and raises :class:`ValueError` whose message names the parameter and the
allowed range, before any work starts.

SNR convention (model §5): SNR := P/σ², with P the per-symbol average transmit power and σ²
the noise variance that a unit-norm despreading sequence sees as σ²/L (so the despread SNR
is L·P/σ²). ``resource = "equal"`` gives every scheme L chips per aggregated symbol;
``"source-literal"`` gives the non-spread scheme one channel use (noise variance σ²).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, fields

__all__ = ["PhyConfig", "SNR_DEFINITION", "SCHEMES", "CLIP_ONLY_SCHEMES", "SEQUENCE_FAMILIES", "CSIT_MODES", "PATHS", "RHO_RULES", "RESOURCES"]

SNR_DEFINITION = "SNR = P/sigma^2 (per-chip noise variance sigma^2/L; despread SNR = L*P/sigma^2), model §5"
SCHEMES = ("floras", "channel-inversion", "ideal", "central-gaussian", "analog-gaussian", "ddgauss", "sqsgd")
# private baselines whose epsilon needs the public clip norm (model §9): normalization "clip" only
CLIP_ONLY_SCHEMES = ("central-gaussian", "analog-gaussian", "ddgauss")
DD_BITS_MAX = 48  # scaled coordinates stay exact in float64 and modular sums in int64
SEQUENCE_FAMILIES = ("walsh-hadamard", "random-orthonormal", "pn")
CSIT_MODES = ("none", "phase")
PATHS = ("auto", "fast", "chip", "sufficient")
RHO_RULES = ("threshold", "min-admitted")
RESOURCES = ("equal", "source-literal")
NORMALIZATIONS = ("paper", "clip")
SQ_ESTIMATORS = ("unbiased", "sparse")  # sqSGD server estimators (model §9.3)


def _choice(name: str, value: str, allowed: tuple[str, ...]) -> None:
    if value not in allowed:
        raise ValueError(f"{name} must be one of {{{', '.join(allowed)}}} (got {value!r})")


def _int_at_least(name: str, value, low: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise ValueError(f"{name} must be an integer ≥ {low} (got {value!r})")


def _finite_positive(name: str, value) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value <= 0:
        raise ValueError(f"{name} must be a finite number > 0 (got {value!r})")


@dataclass(frozen=True)
class PhyConfig:
    """Parameters of the uplink and of the aggregation scheme.

    Attributes
    ----------
    scheme : {"floras", "channel-inversion", "ideal"}
    N : int
        Size of the sequence set (FLORAS), N ≥ K; γ = N − K inactive sequences.
    L : int
        Sequence length in chips; orthonormal families need N ≤ L, Walsh–Hadamard needs L a
        power of two.
    snr_db : float
        SNR = P/σ² in dB (model §5).
    sequences : {"walsh-hadamard", "random-orthonormal", "pn"}
        "pn" is non-orthogonal: the FLORAS estimator is then biased (reported, not refused).
    csit : {"none", "phase"}
        FLORAS effective gain g_k = Re(h_k) (none) or |h_k| (phase pre-rotation, Remark 2).
    path : {"auto", "fast", "chip", "sufficient"}
        FLORAS implementation (model §6.1). "auto": on orthonormal A the sufficient-statistic path
        for untraced rounds (learning runs, sweeps) and the fast path for traced rounds (link
        summaries); the chip path otherwise. "sufficient" yields ŝ and V only (no traces).
    normalization : {"paper", "clip"}
        model §2.
    C : float or None
        Norm bound of s_k [√W]; None means √(d·P).
    clip_norm : float or None
        R of the clip rule [model units]; required for "clip".
    power : float
        P, per-symbol average transmit power [W]; the reference amplitude is b = √P.
    g_th : float
        Channel-inversion truncation threshold on |h_k|² (> 0).
    rho_rule : {"threshold", "min-admitted"}
        ρ = g_th, or ρ = min over admitted clients of |h_k|² (model §6.2).
    resource : {"equal", "source-literal"}
        Equal-resource convention of model §5.
    chunk_size : int
        Entries of the d data slots processed at once (memory bound; does not change results).

    Private baselines (model §9; every one requires ``normalization = "clip"``):

    noise_multiplier : float or None
        z ≥ 0 (central-gaussian, analog-gaussian): total noise std of the estimate of Σ s_k is z·S,
        S = 2C (replace-one) or C (add/remove); the relation is the run's ``[privacy] relation``.
    dd_bits : int
        B, bits per coordinate of DDGauss (modulus 2^B), 2 ≤ B ≤ 48.
    dd_grid : float or None
        γ, the rounding grid [model units]; None: from the bit budget (model §9.2).
    dd_local_std : float
        σ ≥ 0, each client's discrete-Gaussian noise std [model units].
    dd_beta : float
        β ∈ (0, 1), the conditional-rounding failure bound (default e^{−1/2}).
    dd_k_stddevs : float
        k > 0, standard deviations of the modular sum kept inside the modulus (default 4).
    sq_levels, sq_ratio, epsilon0, kappa, sq_estimator
        sqSGD (model §9.3): K_q ≥ 2 quantization levels, subsampling ratio r ∈ (0, 1]
        (d̃ = ⌊r·d⌋ ≥ 1), per-round LDP budget ε₀ > 0, cap κ (integer in [−n, n − 1], n the
        padded rotation length; None → the κ that maximizes m) and the server estimator
        ("unbiased": scaled by d/d̃; "sparse": the source's). Requires normalization = "clip".
    """

    scheme: str = "floras"
    N: int = 30
    L: int = 32
    snr_db: float = 20.0
    sequences: str = "walsh-hadamard"
    csit: str = "none"
    path: str = "auto"
    normalization: str = "paper"
    C: float | None = None
    clip_norm: float | None = None
    power: float = 1.0
    g_th: float = 0.01
    rho_rule: str = "threshold"
    resource: str = "equal"
    chunk_size: int = 65536
    # ---- private baselines (model §9.1, §9.2)
    noise_multiplier: float | None = None
    dd_bits: int = 16
    dd_grid: float | None = None
    dd_local_std: float = 0.0
    dd_beta: float = math.exp(-0.5)
    dd_k_stddevs: float = 4.0
    # sqSGD (model §9.3)
    sq_levels: int = 2
    sq_ratio: float = 1.0
    epsilon0: float = 1.0
    kappa: int | None = None
    sq_estimator: str = "unbiased"

    @classmethod
    def from_dict(cls, data: dict, *, where: str = "phy") -> "PhyConfig":
        """Build from a mapping (e.g. a TOML table); unknown keys are errors naming the key."""
        known = {f.name for f in fields(cls)}
        for key in data:
            if key not in known:
                from difflib import get_close_matches

                close = get_close_matches(str(key), sorted(known), n=1, cutoff=0.6)
                hint = f" (did you mean {where}.{close[0]}?)" if close else ""
                raise ValueError(f"unknown key {where}.{key}{hint} (allowed: {', '.join(sorted(known))})")
        return cls(**data)

    def to_dict(self) -> dict:
        return asdict(self)

    @property
    def noise_variance(self) -> float:
        """σ² = P / 10^(snr_db/10) [W] (model §5)."""
        return self.power / 10.0 ** (self.snr_db / 10.0)

    def norm_bound(self, d: int) -> float:
        """C, defaulting to √(d·P) (model §2)."""
        return math.sqrt(d * self.power) if self.C is None else float(self.C)

    def validate(self, *, K: int, d: int | None = None) -> "PhyConfig":
        """Check every field; raise ValueError naming the parameter and its allowed range."""
        _choice("scheme", self.scheme, SCHEMES)
        _choice("sequences", self.sequences, SEQUENCE_FAMILIES)
        _choice("csit", self.csit, CSIT_MODES)
        _choice("path", self.path, PATHS)
        _choice("normalization", self.normalization, NORMALIZATIONS)
        _choice("rho_rule", self.rho_rule, RHO_RULES)
        _choice("resource", self.resource, RESOURCES)
        _int_at_least("K", K, 1)
        if d is not None:
            _int_at_least("d", d, 1)
        _int_at_least("L", self.L, 1)
        _int_at_least("chunk_size", self.chunk_size, 1)
        if isinstance(self.snr_db, bool) or not isinstance(self.snr_db, (int, float)) or not math.isfinite(self.snr_db):
            raise ValueError(f"snr_db must be a finite number of dB (got {self.snr_db!r})")
        _finite_positive("power", self.power)
        _finite_positive("g_th", self.g_th)
        if self.C is not None:
            _finite_positive("C", self.C)
        if self.normalization == "clip":
            if self.clip_norm is None:
                raise ValueError("clip_norm must be set (a finite number > 0) when normalization = 'clip'")
            _finite_positive("clip_norm", self.clip_norm)
        elif self.clip_norm is not None:
            _finite_positive("clip_norm", self.clip_norm)
        self._validate_sqsgd(d)
        if self.scheme == "floras":
            _int_at_least("N", self.N, K)
            if self.sequences == "walsh-hadamard" and (self.L & (self.L - 1)) != 0:
                raise ValueError(f"L must be a power of two for Walsh–Hadamard sequences (got {self.L})")
            if self.sequences in ("walsh-hadamard", "random-orthonormal") and self.N > self.L:
                raise ValueError(
                    f"N must be ≤ L = {self.L} for orthonormal sequences (got N = {self.N}); "
                    "use sequences = 'pn' to study non-orthogonal sets"
                )
            if self.path in ("fast", "sufficient") and self.sequences == "pn":
                raise ValueError(f"path must be 'chip' or 'auto' for non-orthogonal (pn) sequences: the {self.path} path is exact only when AᵀA = I")
        self._validate_private_baselines(K=K, d=d)
        return self

    def _validate_private_baselines(self, *, K: int, d: int | None) -> None:
        """Checks of the private baselines' keys (model §9); called by :meth:`validate`."""
        if self.scheme in CLIP_ONLY_SCHEMES and self.normalization != "clip":
            raise ValueError(
                f"normalization must be 'clip' for scheme {self.scheme!r} (got {self.normalization!r}): its epsilon "
                "needs a public clip norm, and the 'paper' rule's C_max depends on every client's data"
            )
        if self.noise_multiplier is not None:
            if (isinstance(self.noise_multiplier, bool) or not isinstance(self.noise_multiplier, (int, float))
                    or not math.isfinite(self.noise_multiplier) or self.noise_multiplier < 0):
                raise ValueError(f"noise_multiplier must be a finite number ≥ 0 (got {self.noise_multiplier!r})")
        if self.scheme in ("central-gaussian", "analog-gaussian") and self.noise_multiplier is None:
            raise ValueError(f"noise_multiplier must be set (a finite number ≥ 0) for scheme {self.scheme!r}")
        if isinstance(self.dd_bits, bool) or not isinstance(self.dd_bits, int) or not 2 <= self.dd_bits <= DD_BITS_MAX:
            raise ValueError(f"dd_bits must be an integer with 2 ≤ dd_bits ≤ {DD_BITS_MAX} (got {self.dd_bits!r})")
        if self.dd_grid is not None:
            _finite_positive("dd_grid", self.dd_grid)
        if (isinstance(self.dd_local_std, bool) or not isinstance(self.dd_local_std, (int, float))
                or not math.isfinite(self.dd_local_std) or self.dd_local_std < 0):
            raise ValueError(f"dd_local_std must be a finite number ≥ 0 (got {self.dd_local_std!r})")
        if (isinstance(self.dd_beta, bool) or not isinstance(self.dd_beta, (int, float))
                or not (0.0 < self.dd_beta < 1.0)):
            raise ValueError(f"dd_beta must be a number with 0 < dd_beta < 1 (got {self.dd_beta!r})")
        _finite_positive("dd_k_stddevs", self.dd_k_stddevs)
        if self.scheme == "ddgauss" and self.dd_grid is None:
            from .digital.ddgauss import grid_from_bits  # local: keeps the config module light

            # the budget check needs K only; d (when known) only sets the value of γ
            grid_from_bits(bits=self.dd_bits, n=K, d=1 if d is None else d, clip=float(self.clip_norm),
                           local_std=float(self.dd_local_std), k_stddevs=float(self.dd_k_stddevs))

    def _validate_sqsgd(self, d: int | None) -> None:
        """sqSGD keys (model §9.3): ranges always; κ's range and d̃ ≥ 1 once d is known."""
        _int_at_least("sq_levels", self.sq_levels, 2)
        if isinstance(self.sq_ratio, bool) or not isinstance(self.sq_ratio, (int, float)) \
                or not math.isfinite(self.sq_ratio) or not 0 < self.sq_ratio <= 1:
            raise ValueError(f"sq_ratio must be a number in (0, 1] (got {self.sq_ratio!r})")
        _finite_positive("epsilon0", self.epsilon0)
        if self.kappa is not None and (isinstance(self.kappa, bool) or not isinstance(self.kappa, int)):
            raise ValueError(f"kappa must be an integer or unset (got {self.kappa!r})")
        _choice("sq_estimator", self.sq_estimator, SQ_ESTIMATORS)
        if self.scheme != "sqsgd":
            return
        if self.normalization != "clip":
            raise ValueError(f"normalization must be 'clip' for scheme 'sqsgd' (got {self.normalization!r})")
        if d is not None:
            d_tilde = math.floor(self.sq_ratio * d)
            if d_tilde < 1:
                raise ValueError(f"sq_ratio must be ≥ 1/d = {1 / d:.3g} so that d̃ = ⌊r·d⌋ ≥ 1 (got {self.sq_ratio!r})")
            n = 1 << (d_tilde - 1).bit_length()
            if self.kappa is not None and not -n <= self.kappa <= n - 1:
                raise ValueError(f"kappa must be an integer in [{-n}, {n - 1}] for the padded length n = {n} (got {self.kappa})")
