"""``floras privacy``: ε of a federated run (FLORAS, Gaussian, DDGauss, LDP), planning, privacy curves (model §7, §9).

Usage::

    floras privacy --K 20 --N 30 --M 100 --rounds 200 --delta 1e-5 --level client --d 100000 \
        [--normalization {paper,clip}] [--C C] [--sensitivity S] [--sampling {without-replacement,poisson}] \
        [--accountant {rdp,rdp-generic,rdp-revealed,pld,gdp,fdp,tightest}] [--snr-db DB --L L --csit {none,phase} --rician-k K]
        [--rx-antennas N_r] [--coherence-symbols N_C --pilots {per-block,stale} --fading-correlation L --doppler F]
        [--json FILE|-]
    floras privacy --mechanism gaussian --noise-multiplier Z [--K --M --rounds --delta --relation --sampling]
    floras privacy --mechanism ddgauss --d D --clip-norm C --local-std S (--grid G | --bits B) [--beta --k-stddevs]
    floras privacy --mechanism ldp --epsilon0 E0 [--epsilon-s ES]
    floras privacy plan --target-epsilon E [--mechanism ...] [...]
    floras privacy curves --out DIR

``plan`` finds, for FLORAS, the smallest N; for gaussian, the smallest noise multiplier; for
ddgauss, the smallest local noise scale; for ldp, the largest ε₀ meeting the target. FLORAS with
``--snr-db`` adds the link-level ε_link of the simulated link at that SNR (:mod:`privacy.link`); ``--rician-k``
takes Rician gains of that K-factor (model §5.1; 0, the default: Rayleigh). ``--rx-antennas N_r`` accounts for a
base station combining N_r antennas by maximum ratio (model §5.2; the ε of the combined aggregate under every
accountant, model §9.5 "Several antennas", and its ε_link, model §7.2 "Link level"; --csit none, Rayleigh).
``--coherence-symbols`` cuts the update into coherence blocks with a pilot per block or one stale pilot (model §5.1).

The first form prints ε with every assumption (model §7.4); ``--sensitivity`` overrides the S
derived from the normalization. ``plan`` prints the smallest N that reaches the target ε, or says
that none in the searched range does. ``curves`` computes ε against γ and against T through the
accountant, stores them as JSON and draws the figures (PNG and PDF).
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path

from scenarios.cli.options import write_json


ACTIONS = ("report", "plan", "curves")
_write_json = write_json


def register(subparsers) -> None:
    from scenarios.cli.privacy_link import add_coherence_options

    p = subparsers.add_parser(
        "privacy",
        help="ε of a FLORAS run (threat model T1), planning N, privacy curves",
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("action", nargs="?", choices=ACTIONS, default="report",
                   help="report (default): print ε; plan: smallest N for --target-epsilon; curves: write figures")
    p.add_argument("--K", type=int, default=20, help="clients scheduled per round (default 20)")
    p.add_argument("--N", type=int, default=30, help="spreading sequences, γ = N − K (default 30; ignored by plan)")
    p.add_argument("--M", type=int, default=100, help="clients in the population (default 100)")
    p.add_argument("--rounds", type=int, default=200, help="rounds T (default 200)")
    p.add_argument("--delta", type=float, default=1e-5, help="δ in (0, 1) (default 1e-5)")
    p.add_argument("--d", type=int, default=None, help="model dimension d (required for report and plan)")
    p.add_argument("--level", choices=("client", "item"), default="client")
    p.add_argument("--relation", choices=("replace", "add-remove"), default=None,
                   help="neighbouring relation (default: replace; add-remove with --sampling poisson at client level)")
    p.add_argument("--normalization", choices=("paper", "clip"), default="paper")
    p.add_argument("--C", type=float, default=None, help="norm bound C of s_k (default √(d·P))")
    p.add_argument("--power", type=float, default=1.0, help="per-symbol average power P (default 1); b = √P")
    p.add_argument("--clip-norm", type=float, default=None, help="public clip norm R (normalization clip)")
    p.add_argument("--sensitivity", type=float, default=None, help="override the derived sensitivity S")
    p.add_argument("--sampling", choices=("without-replacement", "poisson"), default="without-replacement")
    p.add_argument("--local-steps", type=int, default=None, help="item level: E local steps (default: full epochs)")
    p.add_argument("--batch-size", type=int, default=None, help="item level with --local-steps: batch size B")
    p.add_argument("--local-dataset-size", type=int, default=None, help="item level with --local-steps: records D")
    p.add_argument("--conversion", choices=("tight", "standard"), default="tight", help="RDP → (ε, δ) conversion")
    p.add_argument("--json", type=str, default=None, metavar="FILE", help="also write the report as JSON ('-': stdout only)")
    p.add_argument("--sample-known", action="store_true", help="report: also ε against an observer that learns who was "
                   "sampled (model §7.3; replace-one)")
    p.add_argument("--mechanism", default="floras",
                   help="a registered privacy mechanism (floras, gaussian, ddgauss, ldp, ...; privacy.mechanisms); one "
                        "without flags of its own takes --param")
    p.add_argument("--param", dest="params", action="append", default=[], metavar="KEY=VALUE",
                   help="a parameter of a mechanism without flags of its own (value parsed as TOML); repeatable")
    p.add_argument("--accountant", default="rdp",
                   help="rdp (default), rdp-generic, pld, gdp (Gaussian only) or fdp (f-DP trade-off functions: "
                        "gaussian, ddgauss, ldp; not floras) or tightest (the smaller ε of rdp and the first of pld, fdp "
                        "that handles the mechanism)")
    p.add_argument("--noise-multiplier", type=float, default=None, help="gaussian: noise std = Z × sensitivity")
    p.add_argument("--grid", type=float, default=None, help="ddgauss: grid step γ (or give --bits)")
    p.add_argument("--local-std", type=float, default=None, help="ddgauss: each client's noise scale σ (model units)")
    p.add_argument("--bits", type=int, default=None, help="ddgauss: bit width B; γ from the bit budget (model §9.2)")
    p.add_argument("--beta", type=float, default=math.exp(-0.5), help="ddgauss: β of the conditional rounding (e^-1/2)")
    p.add_argument("--k-stddevs", type=float, default=4.0, help="ddgauss: standard deviations kept in the modulus (4)")
    p.add_argument("--epsilon0", type=float, default=None, help="ldp: per-round pure ε₀")
    p.add_argument("--epsilon-s", type=float, default=None, help="ldp: further pure ε_s per round (adaptive norm)")
    p.add_argument("--snr-db", type=float, default=None, help="floras: SNR (dB) of the link for ε_link")
    p.add_argument("--L", type=int, default=32, help="floras link: chips per symbol L (default 32)")
    p.add_argument("--csit", choices=("none", "phase"), default="none", help="floras link: CSIT mode")
    p.add_argument("--rx-antennas", type=int, default=1,
                   help="floras: receive antennas N_r ≥ 1, combined by maximum ratio (model §5.2, §9.5; default 1)")
    p.add_argument("--rician-k", type=float, default=0.0,
                   help="floras link: Rician K-factor κ of the gains (linear, ≥ 0; default 0: Rayleigh; model §5.1)")
    add_coherence_options(p)
    p.add_argument("--target-epsilon", type=float, default=None, help="plan: the ε to reach")
    p.add_argument("--n-max", type=int, default=10**9, help="plan: largest N searched (default 1e9)")
    p.add_argument("--out", type=Path, default=None, metavar="DIR", help="curves: output directory")
    p.set_defaults(handler=run)


def _finite(name: str, value, *, positive: bool = False, allow_zero: bool = True) -> float:
    if value is None or not math.isfinite(value) or value < 0 or (value == 0 and not allow_zero):
        raise ValueError(f"{name} must be a finite number {'> 0' if not allow_zero else '≥ 0'} (got {value})")
    return float(value)


def _relation(args) -> str:
    if args.relation is not None:
        return args.relation
    return "add-remove" if (args.sampling == "poisson" and args.level == "client") else "replace"


def _ddgauss_grid(args, n: int, local_std: float) -> float:
    """γ from the bit budget 2^B = 2k·√(c²n²/d + (γ²/4 + σ²)·n)/γ (model §9.2), solved for γ."""
    if args.grid is not None:
        return _finite("grid", args.grid, allow_zero=False)
    if args.bits is None:
        raise ValueError("ddgauss needs --grid G or --bits B")
    if not 1 <= args.bits <= 64:
        raise ValueError(f"bits must be an integer in [1, 64] (got {args.bits})")
    k, c, d = _finite("k-stddevs", args.k_stddevs, allow_zero=False), _finite("clip-norm", args.clip_norm, allow_zero=False), args.d
    m2 = float(2 ** args.bits) ** 2
    denom = m2 / (4.0 * k * k) - n / 4.0
    if denom <= 0:
        raise ValueError(f"bits must satisfy 2^B > k·√n = {k * math.sqrt(n):.4g} for the modulus to hold the sum (got {args.bits})")
    return math.sqrt((c * c * n * n / d + local_std**2 * n) / denom)


def _scheme_params(args, *, override=None) -> dict:
    """Keyword arguments of RunAccountant for --mechanism gaussian/ddgauss/ldp."""
    from privacy.engines import ACCOUNTANTS

    if args.accountant not in ACCOUNTANTS:
        raise ValueError(f"accountant must be one of {{{', '.join(ACCOUNTANTS)}}} (got {args.accountant!r})")
    ov = override or {}
    common = dict(K=args.K, M=args.M, level=args.level, relation=_relation(args), sampling=args.sampling,
                  delta=args.delta, accountant=args.accountant, conversion=args.conversion)
    if args.mechanism == "gaussian":
        z = ov.get("noise_multiplier", args.noise_multiplier)
        if "noise_multiplier" not in ov:
            z = _finite("noise-multiplier", z)
        S = 2.0 if common["relation"] == "replace" else 1.0
        return dict(common, clip_norm=1.0, noise_std=z * S)
    if args.mechanism not in ("gaussian", "ddgauss", "ldp"):  # a mechanism registered elsewhere: --param KEY=VALUE
        from scenarios.cli.train import parse_override

        return dict(common, **dict(parse_override(t) for t in args.params), **ov)
    if args.mechanism == "ddgauss":
        if args.d is None:
            raise ValueError("d must be given with --d (the model dimension, an integer ≥ 1)")
        sd = ov.get("local_std", args.local_std)
        if "local_std" not in ov:
            sd = _finite("local-std", sd)
        if args.clip_norm is None:
            raise ValueError("ddgauss needs --clip-norm C (the ℓ2 clip norm, > 0)")
        return dict(common, d=args.d, clip_norm=_finite("clip-norm", args.clip_norm, allow_zero=False),
                    grid=_ddgauss_grid(args, args.K, sd), local_std=sd, beta=args.beta)
    e0 = ov.get("epsilon0", args.epsilon0)
    if "epsilon0" not in ov:
        e0 = _finite("epsilon0", e0)
    return dict(common, epsilon0=e0, **({} if args.epsilon_s is None else {"epsilon_s": _finite("epsilon-s", args.epsilon_s)}))


def _config(args) -> dict:
    from scenarios.cli.privacy_link import coherence_blocks, link_model

    if args.d is None:
        raise ValueError("d must be given with --d (the model dimension, an integer ≥ 1)")
    relation = _relation(args)
    blocks = coherence_blocks(args)
    return dict(
        K=args.K, M=args.M, d=args.d, normalization=args.normalization, C=args.C, power=args.power,
        clip_norm=args.clip_norm, level=args.level, relation=relation, sampling=args.sampling, delta=args.delta,
        local_steps=args.local_steps, batch_size=args.batch_size, local_dataset_size=args.local_dataset_size,
        sensitivity=args.sensitivity, conversion=args.conversion, accountant=args.accountant,
        link=link_model(args, blocks), antennas=args.rx_antennas, pilot_blocks=blocks[0],
    )


def run(args) -> int:
    from privacy import FlorasRunAccountant, plan_smallest_N

    if args.rounds < 0:
        raise ValueError(f"rounds must be an integer ≥ 0 (got {args.rounds})")
    if args.action == "curves":
        if args.out is None:
            raise ValueError("out must be given with --out DIR for 'floras privacy curves'")
        from scenarios.store import check_output_location

        check_output_location(args.out, need_bytes=16 * 2**20, what="--out")
        from figures.privacy_curves import plot_curves
        from privacy.curves import compute_curves, write_curves

        data = compute_curves()
        path = write_curves(data, args.out / "privacy_curves.json")
        for p in plot_curves(path, args.out):
            print(p)
        return 0
    from scenarios.cli.options import check_json_path

    check_json_path(args.json)
    quiet = args.json == "-"  # the JSON alone goes to stdout
    from privacy.engines import ACCOUNTANTS

    if args.accountant not in ACCOUNTANTS:
        raise ValueError(f"accountant must be one of {{{', '.join(ACCOUNTANTS)}}} (got {args.accountant!r})")
    if args.action == "plan":
        if args.target_epsilon is None or not (math.isfinite(args.target_epsilon) and args.target_epsilon > 0):
            raise ValueError(f"target-epsilon must be a finite number > 0 (got {args.target_epsilon})")
    from privacy.mechanisms import mechanism

    mech = mechanism(args.mechanism)  # a registered mechanism, or the list of them
    if args.accountant == "fdp" and mech.trade_off is None:
        from privacy.fdp.accounting import FLORAS_REFUSAL

        raise ValueError(FLORAS_REFUSAL if mech.name == "floras" else
                         f"accountant fdp: mechanism {mech.name} declares no trade-off function; use --accountant rdp")
    if args.mechanism != "floras":
        return _run_scheme(args, quiet)
    if args.accountant == "gdp":
        raise ValueError("accountant gdp does not support the FLORAS (Cauchy) mechanism; use rdp, rdp-generic or pld")
    config = _config(args)
    if args.action == "plan":
        result = plan_smallest_N(target_epsilon=args.target_epsilon, rounds=args.rounds, n_max=args.n_max, **config)
        if not quiet:
            print(result.message)
            print(result.report)
        _write_json(args.json, result.to_dict())
        return 0
    report = FlorasRunAccountant(N=args.N, **config).report(rounds=args.rounds)
    out = report.to_dict()
    if args.sample_known:
        out["sample_known"] = _known(args, lambda M: FlorasRunAccountant(N=args.N, **{**config, "M": M}), config)
    if not quiet:
        print(report if not args.sample_known else f"{report}\n{out['sample_known']['text']}")
    _write_json(args.json, out)
    return 0


def _known(args, make, kw: dict) -> dict:
    from scenarios.cli.privacy_known import known_sample_figure

    return known_sample_figure(make, K=kw["K"], M=kw["M"], rounds=args.rounds, delta=kw["delta"],
                               relation=kw["relation"])


def _run_scheme(args, quiet: bool) -> int:
    from privacy import RunAccountant
    from privacy.calibration import calibrate

    if args.action == "report":
        kw = _scheme_params(args)
        acc = RunAccountant(args.mechanism, **kw)
        rep = acc.report(rounds=args.rounds)
        out = rep.to_dict()
        if args.mechanism == "gaussian":
            out["noise_multiplier"] = kw["noise_std"] / (2.0 if kw["relation"] == "replace" else 1.0)
        if args.mechanism == "ddgauss":
            out.update(delta2=acc.event.delta2 if hasattr(acc.event, "delta2") else acc.event.event.delta2, grid=kw["grid"])
        if args.sample_known:
            out["sample_known"] = _known(args, lambda M: RunAccountant(args.mechanism, **{**kw, "M": M}), kw)
        if not quiet:
            print(rep if not args.sample_known else f"{rep}\n{out['sample_known']['text']}")
        _write_json(args.json, out)
        return 0
    searched = {
        "gaussian": ("noise_multiplier", False, 1e-2, 1e4),
        "ddgauss": ("local_std", False, 1e-4, 1e6),
        "ldp": ("epsilon0", True, 1e-6, 50.0),
    }
    if args.mechanism not in searched:
        raise ValueError(f"mechanism {args.mechanism!r}: 'floras privacy plan' searches the built-in mechanisms only; "
                         "calibrate a scheme with `floras calibrate --scheme ...`")
    name, increasing, lo, hi = searched[args.mechanism]
    _scheme_params(args, override={name: 1.0})  # validates the rest before the search

    def make(x: float):
        return RunAccountant(args.mechanism, **_scheme_params(args, override={name: x}))

    value = calibrate(make, target_epsilon=args.target_epsilon, rounds=args.rounds, lower=lo, upper=hi,
                      increasing=increasing, rel_tol=1e-4)
    rep = make(value).report(rounds=args.rounds)
    word = "largest" if increasing else "smallest"
    message = f"{word} {name} = {value:.6g} reaches ε = {rep.epsilon:.6g} ≤ {args.target_epsilon:g} after {args.rounds} rounds ({args.accountant})"
    if not quiet:
        print(message)
        print(rep)
    _write_json(args.json, {name: value, "target_epsilon": args.target_epsilon, "message": message, "report": rep.to_dict(),
                            "accountant": args.accountant, "approximate": rep.approximate})
    return 0
