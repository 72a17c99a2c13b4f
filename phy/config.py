"""Physical-layer configuration (model §3–§6, §9), validated in one place.

``[phy]`` holds the keys every scheme shares (SNR, chips, power, normalization, truncation, memory);
each scheme's own keys are its sub-table ``[phy.<scheme>]`` (``[phy.floras] N = 30``,
``[phy.ddgauss] bits = 16``), whose dataclass the scheme declares in :mod:`phy.schemes`. All values
are plain typed values so the configuration loads from TOML. ``validate(K=, d=)`` checks everything
that depends on the number of scheduled clients K and the model dimension d, and raises
:class:`ValueError` whose message names the parameter (``phy.floras.N``) and the allowed range,
before any work starts.

SNR convention (model §5): SNR := P/σ², with P the per-symbol average transmit power and σ²
the noise variance that a unit-norm despreading sequence sees as σ²/L (so the despread SNR
is L·P/σ²). ``resource = "equal"`` gives every scheme L chips per aggregated symbol;
``"source-literal"`` gives the non-spread scheme one channel use (noise variance σ²).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field, fields, replace
from difflib import get_close_matches

from .channel_checks import check_channel
from .checks import check_choice, check_finite_positive, check_int_at_least

__all__ = ["PhyConfig", "SNR_DEFINITION", "RHO_RULES", "RESOURCES", "NORMALIZATIONS", "LOS_DOPPLER_TR38901"]

SNR_DEFINITION = "SNR = P/sigma^2 (per-chip noise variance sigma^2/L; despread SNR = L*P/sigma^2), model §5"
RHO_RULES = ("threshold", "min-admitted")
RESOURCES = ("equal", "source-literal")
NORMALIZATIONS = ("paper", "clip")
LOS_DOPPLER_TR38901 = 0.7  # f_S/f_D of a LoS tap's Doppler peak, TR 38.901 §7.7.2 (TDL-D, -E)


def _registry():
    from . import schemes  # the scheme modules import this one: look the registry up at call time

    return schemes


@dataclass(frozen=True)
class PhyConfig:
    """Parameters of the uplink shared by every scheme, and each scheme's own sub-table.

    Attributes
    ----------
    scheme : str
        A registered scheme (:func:`phy.schemes.scheme_names`).
    L : int
        Chips per aggregated symbol (FLORAS: the sequence length; orthonormal families need
        N ≤ L, Walsh–Hadamard needs L a power of two).
    snr_db : float
        SNR = P/σ² in dB (model §5).
    normalization : {"paper", "clip"}
        model §2.
    C : float or None
        Norm bound of s_k [√W]; None means √(d·P).
    clip_norm : float or None
        R of the clip rule [model units]; required for "clip".
    power : float
        P, per-symbol average transmit power [W]; the reference amplitude is b = √P.
    g_th : float
        Truncation threshold on |h_k|² (> 0): channel inversion and the schemes on its uplink
        (analog Gaussian, the digital uplink) admit client k only if |h_k|² ≥ g_th.
    rho_rule : {"threshold", "min-admitted"}
        ρ = g_th, or ρ = min over admitted clients of |h_k|² (model §6.2).
    resource : {"equal", "source-literal"}
        Equal-resource convention of model §5.
    chunk_size : int
        Entries of the d data slots processed at once (memory bound; does not change results).
    pathloss : str
        Large-scale model of the cell (model §5.1, :mod:`phy.channels`): "none" (no cell: every client at
        average gain 1, the link of model §5; default), "log-distance", or TR 38.901 "umi", "uma", "rma".
    cell_radius, cell_min_distance : float
        R > r₀ > 0 [m]: clients uniform in the annulus r₀ ≤ d ≤ R (TR 38.901: 10 m ≤ r₀, R ≤ 5 km).
    redrop : bool
        Drop the clients anew every round (default: a fixed drop per client identity).
    carrier_ghz : float
        f_c [GHz] (log-distance: PL(d₀) only; TR 38.901: 0.5–100, RMa ≤ 30).
    bs_height, ut_height : float
        Antenna heights [m] (TR 38.901 only; bs_height None: 10 UMi, 25 UMa, 35 RMa).
    pathloss_exponent : float
        n > 0 of the log-distance model.
    shadowing_db : float or None
        σ of the log-normal shadowing [dB] (≥ 0); None: the model's own (log-distance 0, TR 38.901 its σ_SF).
    snr_reference : {"cell-edge", "median-distance"}
        Distance at which ``snr_db`` holds for a full-power client without shadowing (model §5.1).
    power_control : {"full-power", "pathloss-inversion"}
        Statistical power control (model §5.1); truncated channel inversion acts on top.
    pc_target_db : float
        β_target [dB relative to the reference gain] of path-loss inversion.
    coherence_symbols : int or None
        n_c ≥ 1, slots per coherence block of the small-scale fading; None: one block per update (model §5).
    fading_correlation : {"iid", "jakes", "jakes-exact", "tdl"}
        Blocks i.i.d., first-order Gauss–Markov with ρ = J₀(2π·doppler·n_c) between consecutive blocks, or the
        Clarke process with J₀(2π·doppler·n_c·Δ) between blocks Δ apart (model §5.1).
    doppler : float
        f_D·T_s, the Doppler frequency times the slot duration (0 ≤ doppler ≤ 0.5; "jakes", "jakes-exact", and
        "tdl" with ``tdl_time_blocks`` > 1, where the slot is an OFDM symbol).
    tdl_model, delay_spread, subcarrier_spacing : str, float, float
        ``fading_correlation = "tdl"``: the blocks are OFDM subcarriers Δf = ``subcarrier_spacing`` [Hz] apart of
        the TR 38.901 profile TDL-``tdl_model`` ("A", "B", "C" NLoS; "D", "E" LoS, with the profile's own
        Rician K-factor, :attr:`los_k`) at delay spread ``delay_spread`` [s] (model §5.1, :mod:`phy.channels.tdl`).
    tdl_time_blocks : int
        ``fading_correlation = "tdl"``: B_t ≥ 1 consecutive coherence blocks of n_c slots on each subcarrier, the
        taps following the Clarke process in time, J₀(2π·doppler·n_c·Δ) between blocks Δ apart (Doppler within the
        update; a LoS profile's specular part rotates at ``los_doppler``); 1: each subcarrier constant over its n_c
        symbols (model §5.1).
    rician_k : float
        Rician K-factor κ ≥ 0 (linear; 0: Rayleigh); not with a TDL profile (which carries its own).
    los_doppler : float or None
        f_S/f_D in [−1, 1], the line-of-sight component's Doppler shift over the maximum Doppler (cos of its angle
        of arrival to the motion) with Rician gains and blocks in time ("jakes", "jakes-exact", "tdl" with
        ``tdl_time_blocks`` > 1): its phase advances by f_S/f_D·2π·doppler·n_c per block (model §5.1); None:
        TR 38.901 §7.7.2's 0.7 (:attr:`los_doppler_ratio`).
    timing_offset : float
        τ_max in [0, 1): per-client fractional-chip offsets τ_k ~ U(0, τ_max) (FLORAS chip path and channel
        inversion, :mod:`phy.chip_timing`).
    rx_antennas : int
        N_r ≥ 1 receive antennas at the base station (model §5.2, :mod:`phy.antennas`); 1: the link of model §5.
    csi_error : float
        σ_e² ≥ 0, the clients' relative channel-estimation error E|ĥ_k − h_k|²/E|h_k|² (model §5.1,
        :mod:`phy.csi_error`); channel inversion and analog Gaussian (any N_r: every antenna estimated, the
        combiner of the estimates), FLORAS with phase CSIT (N_r = 1); 0: perfect CSI (default).
    inversion_csit : {"stale", "per-block", "per-subcarrier"}
        With coherence blocks, channel inversion and analog Gaussian: the CSIT of block 0 kept over the update
        (:mod:`phy.csit_aging`), re-acquired per block with per-block admission, or (``fading_correlation = "tdl"``)
        each subcarrier's CSIT from its first time block kept over its ``tdl_time_blocks`` (:mod:`phy.csit_blocks`);
        model §5.1.
    params : tuple of (scheme, parameters)
        The ``[phy.<scheme>]`` sub-tables given (only those differing from the scheme's defaults
        are kept); :meth:`of` returns any scheme's parameters, defaults filled in.
    """

    scheme: str = "floras"
    L: int = 32
    snr_db: float = 20.0
    normalization: str = "paper"
    C: float | None = None
    clip_norm: float | None = None
    power: float = 1.0
    g_th: float = 0.01
    rho_rule: str = "threshold"
    resource: str = "equal"
    chunk_size: int = 65536
    pathloss: str = "none"
    cell_radius: float = 250.0
    cell_min_distance: float = 10.0
    redrop: bool = False
    carrier_ghz: float = 3.5
    bs_height: float | None = None
    ut_height: float = 1.5
    pathloss_exponent: float = 3.0
    shadowing_db: float | None = None
    snr_reference: str = "cell-edge"
    power_control: str = "full-power"
    pc_target_db: float = 0.0
    coherence_symbols: int | None = None
    fading_correlation: str = "iid"
    doppler: float = 0.0
    tdl_model: str = "A"
    delay_spread: float = 100e-9
    subcarrier_spacing: float = 30e3
    tdl_time_blocks: int = 1
    rician_k: float = 0.0
    los_doppler: float | None = None
    timing_offset: float = 0.0
    rx_antennas: int = 1
    csi_error: float = 0.0
    inversion_csit: str = "stale"
    params: tuple = field(default=(), compare=True)

    def __post_init__(self):
        items = dict(self.params.items() if isinstance(self.params, dict) else self.params)
        kept = []
        for name in sorted(items):
            p = items[name]
            spec = _registry().scheme_spec(name, where="phy sub-table")
            if spec.params is None or type(p) is not spec.params:
                raise TypeError(f"phy.{name} parameters must be a {getattr(spec.params, '__name__', 'None')} (got {type(p).__name__})")
            if not _same(p, spec.params()):
                kept.append((name, p))
        object.__setattr__(self, "params", tuple(kept))

    # ------------------------------------------------------------------ construction
    @classmethod
    def from_dict(cls, data: dict, *, where: str = "phy") -> "PhyConfig":
        """Build from a mapping (e.g. a TOML table); unknown keys are errors naming the key.

        A sub-table is ``{"floras": {"N": 30}}``; a key of a scheme given flat (``N = 30`` in
        ``[phy]``, the form of earlier scenario files) is an error naming its new place.
        """
        reg = _registry()
        common = [f.name for f in fields(cls) if f.name != "params"]
        flat, params = {}, {}
        for key, value in data.items():
            if key in common:
                flat[key] = value
            elif isinstance(value, dict):
                spec = reg.scheme_spec(key, where=f"the sub-table name in [{where}.{key}]")
                params[key] = _params_from_dict(spec, value, where=f"{where}.{key}")
            else:
                moved = _owners(key)
                if moved:
                    scheme, name = moved[0]
                    also = "".join(f" or {where}.{s}.{n}" for s, n in moved[1:])
                    raise ValueError(
                        f"{where}.{key} has moved to {where}.{scheme}.{name}{also} (the sub-table of the scheme it "
                        f"configures): write it as `{name} = {value!r}` under [{where}.{scheme}] (in an override or sweep "
                        f"grid: \"{where}.{scheme}.{name}\")")
                tables = [f"{n}.*" for n in reg.scheme_names() if reg.scheme_spec(n).params is not None]
                close = get_close_matches(str(key), common, n=1, cutoff=0.6)
                hint = f" (did you mean {where}.{close[0]}?)" if close else ""
                raise ValueError(f"unknown key {where}.{key}{hint} (allowed: {', '.join(sorted(common))}, "
                                 f"and the sub-tables {', '.join(tables)})")
        return cls(**flat, params=params)

    @classmethod
    def make(cls, **table) -> "PhyConfig":
        """``PhyConfig.make(scheme="ddgauss", clip_norm=1.0, ddgauss={"bits": 12})``: :meth:`from_dict` of the keywords."""
        return cls.from_dict(table)

    def to_dict(self) -> dict:
        """The shared keys and the sub-table of the configured scheme and of every scheme given (defaults filled)."""
        out = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "params"}
        names = dict.fromkeys([self.scheme, *(n for n, _ in self.params)])
        for name in names:
            p = self.of(name)
            if p is not None:
                out[name] = asdict(p)
        return out

    # ------------------------------------------------------------------ access
    def of(self, scheme: str):
        """The parameters of ``scheme`` (its sub-table, defaults filled in); None for a scheme without any."""
        for name, p in self.params:
            if name == scheme:
                return p
        return _registry().scheme_spec(scheme).default_params()

    @property
    def scheme_params(self):
        """The parameters of the configured scheme."""
        return self.of(self.scheme)

    def with_params(self, scheme: str, **changes) -> "PhyConfig":
        """A copy with fields of ``[phy.<scheme>]`` changed (``cfg.with_params("floras", N=40)``)."""
        p = self.of(scheme)
        if p is None:
            raise ValueError(f"scheme {scheme!r} has no parameters (got {sorted(changes)})")
        known = {f.name for f in fields(p)}
        unknown = sorted(set(changes) - known)
        if unknown:
            raise ValueError(f"unknown key phy.{scheme}.{unknown[0]} (allowed: {', '.join(sorted(known))})")
        rest = {n: q for n, q in self.params if n != scheme}
        return replace(self, params={**rest, scheme: replace(p, **changes)})

    @property
    def noise_variance(self) -> float:
        """σ² = P / 10^(snr_db/10) [W] (model §5)."""
        return self.power / 10.0 ** (self.snr_db / 10.0)

    @property
    def los_k(self) -> float:
        """κ of the Rician fading the link draws: ``rician_k``, or TDL-D/E's own K-factor
        (:func:`phy.channels.tdl.los_k_factor`) with ``fading_correlation = "tdl"``; 0: Rayleigh."""
        if self.fading_correlation == "tdl":
            from .channels.tdl import LOS_MODELS, los_k_factor

            if self.tdl_model in LOS_MODELS:
                return los_k_factor(self.tdl_model)
        return float(self.rician_k)

    @property
    def los_doppler_ratio(self) -> float:
        """f_S/f_D of the line-of-sight component: ``los_doppler``, or TR 38.901 §7.7.2's 0.7 (the Doppler peak of
        TDL-D and -E's Rician first tap at f_S = 0.7·f_D) when unset (model §5.1)."""
        return LOS_DOPPLER_TR38901 if self.los_doppler is None else float(self.los_doppler)

    @property
    def blocks_in_time(self) -> bool:
        """The coherence blocks follow one another in time ("jakes", "jakes-exact", or "tdl" with
        ``tdl_time_blocks`` > 1), so a Doppler shift turns the line of sight between them (model §5.1)."""
        return self.coherence_symbols is not None and (
            self.fading_correlation in ("jakes", "jakes-exact")
            or (self.fading_correlation == "tdl" and self.tdl_time_blocks > 1))

    @property
    def has_cell(self) -> bool:
        """A path-loss model is configured (model §5.1)."""
        return self.pathloss != "none"

    @property
    def snr_definition(self) -> str:
        """The SNR convention of this link, for reports: model §5's, and with a cell its reference distance."""
        if not self.has_cell:
            return SNR_DEFINITION
        where = "the cell edge" if self.snr_reference == "cell-edge" else "the median distance"
        return (f"{SNR_DEFINITION}; cell ({self.pathloss}): snr_db holds for a full-power client at {where} "
                f"without shadowing (model §5.1)")

    def norm_bound(self, d: int) -> float:
        """C, defaulting to √(d·P) (model §2)."""
        return math.sqrt(d * self.power) if self.C is None else float(self.C)

    # ------------------------------------------------------------------ validation
    def validate(self, *, K: int, d: int | None = None) -> "PhyConfig":
        """Check every field; raise ValueError naming the parameter and its allowed range."""
        spec = _registry().scheme_spec(self.scheme, where="scheme")
        check_choice("normalization", self.normalization, NORMALIZATIONS)
        check_choice("rho_rule", self.rho_rule, RHO_RULES)
        check_choice("resource", self.resource, RESOURCES)
        check_int_at_least("K", K, 1)
        if d is not None:
            check_int_at_least("d", d, 1)
        check_int_at_least("L", self.L, 1)
        check_int_at_least("chunk_size", self.chunk_size, 1)
        if isinstance(self.snr_db, bool) or not isinstance(self.snr_db, (int, float)) or not math.isfinite(self.snr_db):
            raise ValueError(f"snr_db must be a finite number of dB (got {self.snr_db!r})")
        check_finite_positive("power", self.power)
        check_finite_positive("g_th", self.g_th)
        if self.C is not None:
            check_finite_positive("C", self.C)
        if self.normalization == "clip":
            if self.clip_norm is None:
                raise ValueError("clip_norm must be set (a finite number > 0) when normalization = 'clip'")
            check_finite_positive("clip_norm", self.clip_norm)
        elif self.clip_norm is not None:
            check_finite_positive("clip_norm", self.clip_norm)
        if spec.requires_clip and self.normalization != "clip":
            raise ValueError(
                f"normalization must be 'clip' for scheme {self.scheme!r} (got {self.normalization!r}): its epsilon "
                "needs a public clip norm, and the 'paper' rule's C_max depends on every client's data")
        check_channel(self, spec)
        if d is not None:
            from .coherence import check_exact_blocks  # numpy: not at import (the command line builds without it)

            check_exact_blocks(self, d)
        for name, p in self.params:
            if name != self.scheme:
                p.check(self, K=K, d=d, active=False)
        active = self.scheme_params
        if active is not None:
            active.check(self, K=K, d=d, active=True)
        return self


def _same(a, b) -> bool:
    """Field by field equal and of the same type (False is not 0.0: a wrong type must reach the checks)."""
    return all(type(getattr(a, f.name)) is type(getattr(b, f.name)) and getattr(a, f.name) == getattr(b, f.name)
               for f in fields(a))


def _owners(key: str) -> list[tuple[str, str]]:
    """Every (scheme, field) a flat key now lives at in a scheme's sub-table (empty when none)."""
    reg = _registry()
    out = []
    for name in reg.scheme_names():
        cls = reg.scheme_spec(name).params
        if cls is None:
            continue
        moved = dict(getattr(cls, "moved_from", {}))
        if key in moved:
            out.append((name, moved[key]))
        elif key in {f.name for f in fields(cls)}:
            out.append((name, key))
    return out


def _params_from_dict(spec, data: dict, *, where: str):
    """The scheme's parameter dataclass from its sub-table; a key of another scheme names that scheme."""
    if spec.params is None:
        raise ValueError(f"[{where}]: scheme {spec.name!r} has no parameters of its own; remove the table")
    known = [f.name for f in fields(spec.params)]
    for key, value in data.items():
        if key in known:
            continue
        moved = dict(getattr(spec.params, "moved_from", {}))
        if key in moved:
            raise ValueError(f"{where}.{key} is now {where}.{moved[key]} (the sub-table names the scheme)")
        owners = [o for o in _owners(key) if o[0] != spec.name]
        owner = owners[0] if owners else None
        if isinstance(value, dict):
            raise ValueError(f"{where}.{key}: a scheme's sub-table has no tables inside (allowed keys: {', '.join(known)})")
        if owner is not None and owner[0] != spec.name:
            root = where.rsplit(".", 1)[0]
            raise ValueError(f"{where}.{key} belongs to scheme {owner[0]!r}: set it as {root}.{owner[0]}.{owner[1]} "
                             f"(allowed in [{where}]: {', '.join(known)})")
        close = get_close_matches(str(key), known, n=1, cutoff=0.6)
        hint = f" (did you mean {where}.{close[0]}?)" if close else ""
        raise ValueError(f"unknown key {where}.{key}{hint} (allowed: {', '.join(known)})")
    return spec.params(**data)
