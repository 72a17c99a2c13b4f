"""``floras calibrate``: the noise parameter of a scheme that meets a target ε (model §10).

Usage::

    floras calibrate --scheme central-gaussian --target-epsilon 8 --delta 1e-5 --K 20 --M 100 --rounds 200 \
        [--clip-norm 1] [--accountant rdp] [--json FILE|-]
    floras calibrate --scheme floras --N 30 --L 32 --d 4810 --target-epsilon 8 ...      # C at fixed N
    floras calibrate --scheme floras --calibrate-key N --C 1 --d 4810 ...            # smallest N at fixed C
    floras calibrate --scheme ddgauss --dd-bits 16 --d 4810 ...                        # σ at bit width B
    floras calibrate --scheme sqsgd --sq-levels 2 --sq-ratio 0.1 ...                   # largest ε₀

Searched keys: FLORAS ``C`` (fixed N) or ``N`` (fixed C); central and analog Gaussian
``noise_multiplier``; DDGauss ``dd_local_std``; sqSGD ``epsilon0``. The accountant is the one a
run of the same scenario uses for its ε column. A target no value reaches prints "infeasible"
and exits with status 1 (the JSON then has ``value`` null and the reason).
"""

from __future__ import annotations

import argparse
import math
import sys

from scenarios.cli.options import add_phy_set_option, write_json


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "calibrate", help="noise parameter of a scheme that meets a target ε (model §10)",
        description=__doc__.split("\n\n")[0].replace("``", ""), formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--scheme", required=True, help="a registered scheme (floras, central-gaussian, analog-gaussian, ddgauss, "
                   "sqsgd, ...)")
    p.add_argument("--target-epsilon", required=True, help="target ε > 0, or inf (no privacy noise)")
    p.add_argument("--delta", type=float, default=1e-5, help="δ in (0, 1) (default 1e-5)")
    p.add_argument("--K", type=int, default=20, help="clients sampled per round, without replacement (default 20)")
    p.add_argument("--M", type=int, default=100, help="clients in the population (default 100)")
    p.add_argument("--rounds", type=int, default=200, help="rounds T (default 200)")
    p.add_argument("--relation", choices=("replace", "add-remove"), default="replace", help="neighbouring relation (default replace)")
    p.add_argument("--level", choices=("client", "item"), default="client")
    p.add_argument("--accountant", default="rdp", help="rdp (default: tightest valid RDP), rdp-generic, rdp-revealed, pld, gdp, fdp or tightest (the smaller ε of rdp-revealed and pld, else fdp)")
    p.add_argument("--d", type=int, default=None, help="model dimension d (FLORAS and DDGauss need it)")
    p.add_argument("--clip-norm", type=float, default=1.0, help="public clip norm of each update (default 1)")
    p.add_argument("--N", type=int, default=None, help="FLORAS: sequences N (fixed when C is searched)")
    p.add_argument("--L", type=int, default=None, help="FLORAS / analog: chips per symbol")
    p.add_argument("--C", type=float, default=None, help="FLORAS: norm bound C of s_k (fixed when N is searched)")
    p.add_argument("--calibrate-key", default=None, help="the scheme's key to search when it has several (FLORAS: C at "
                   "fixed N, the default, or N at fixed C)")
    p.add_argument("--dd-bits", type=int, default=None, help="DDGauss: bit width B")
    p.add_argument("--dd-grid", type=float, default=None, help="DDGauss: grid γ (default: from the bit budget)")
    p.add_argument("--dd-k-stddevs", type=float, default=None, help="DDGauss: standard deviations kept in the modulus")
    p.add_argument("--sq-levels", type=int, default=None, help="sqSGD: quantization levels K_q")
    p.add_argument("--sq-ratio", type=float, default=None, help="sqSGD: coordinate ratio r")
    add_phy_set_option(p)
    p.add_argument("-v", "--verbose", action="store_true",
                   help="print the full assumptions of ε (default: one privacy line; --json keeps them all)")
    p.add_argument("--json", default=None, metavar="FILE", help="write the result as JSON ('-': standard output)")
    p.set_defaults(handler=run)


#: the named flags and the [phy] keys they set (any other key: --set phy.<scheme>.KEY=VALUE)
FLAG_KEYS = (("N", "floras.N"), ("L", "L"), ("C", "C"), ("dd_bits", "ddgauss.bits"), ("dd_grid", "ddgauss.grid"),
             ("dd_k_stddevs", "ddgauss.k_stddevs"), ("sq_levels", "sqsgd.levels"), ("sq_ratio", "sqsgd.ratio"))


def scenario_mapping(args) -> dict:
    """The scenario that the flags describe (everything else at the defaults of ``scenarios.config``)."""
    from scenarios.cli.options import put_phy_key, set_phy_keys
    from scenarios.config.schemes import wiring

    phy: dict = {"scheme": args.scheme, "normalization": "clip", "clip_norm": args.clip_norm}
    for flag, key in FLAG_KEYS:
        if getattr(args, flag) is not None:
            put_phy_key(phy, key, getattr(args, flag))
    set_phy_keys(phy, args.overrides)
    row = wiring(args.scheme)
    if row.scenario_defaults is not None:  # the scheme's own defaults for keys the flags left out (FLORAS: N, L)
        phy = row.scenario_defaults(phy, K=args.K)
    return {
        "partition": {"clients": args.M},
        "training": {"clients_per_round": args.K},
        "phy": phy,
        "privacy": {"delta": args.delta, "relation": args.relation, "level": args.level, "accountant": args.accountant,
                    "calibrate_key": args.calibrate_key},
        "run": {"rounds": args.rounds},
    }


def run(args) -> int:
    from scenarios.config.calibration import InfeasibleTarget, calibrate_config, parse_target, with_search_placeholder
    from scenarios.config import scenario_from_dict

    from scenarios.config.schemes import wiring

    target = parse_target(_target(args.target_epsilon))
    if args.d is None and wiring(args.scheme).depends_on_d and target != math.inf:
        raise ValueError(f"d must be given with --d for --scheme {args.scheme} (the model dimension, an integer ≥ 1)")
    if args.d is not None and args.d < 1:
        raise ValueError(f"d must be an integer ≥ 1 (got {args.d})")
    config = scenario_from_dict(with_search_placeholder(scenario_mapping(args)), resolve=False)
    try:
        cal = calibrate_config(config, target, d=args.d or 1)
    except InfeasibleTarget as exc:
        payload = {"scheme": args.scheme, "parameter": None, "value": None, "target_epsilon": args.target_epsilon,
                   "feasible": False, "reason": str(exc)}
        _emit(args.json, payload)
        import textwrap

        # wrapped: no terminal line over 200 characters (the JSON keeps the reason whole)
        print(textwrap.fill(f"floras calibrate: infeasible: {exc}", width=200, subsequent_indent="  ",
                            break_long_words=False, break_on_hyphens=False), file=sys.stderr)
        return 1
    payload = {**cal.to_dict(), "feasible": True}
    back_off = back_off_db(cal, d=args.d, power=float(config.phy.power))
    text = _text(cal, verbose=args.verbose, json_path=args.json)
    if back_off is not None:
        payload["back_off_db"] = back_off
        first, _, rest = text.partition("\n")
        text = (f"{first}\n  C as transmit back-off: 20·log10(C/√(d·P)) = {back_off:.2f} dB relative to full power √(d·P) "
                f"(d = {args.d}, P = {config.phy.power:g}; model §2)" + (f"\n{rest}" if rest else ""))
    _emit(args.json, payload, text=text)
    return 0


def back_off_db(cal, *, d: int | None, power: float) -> float | None:
    """20·log10(C/√(d·P)): FLORAS's calibrated norm bound C against full power √(d·P), in dB (model §2).

    None unless the calibrated key is C with a finite positive value and d is known."""
    if cal.parameter != "C" or d is None or not isinstance(cal.value, (int, float)):
        return None
    if not (math.isfinite(cal.value) and cal.value > 0):
        return None
    return 20.0 * math.log10(cal.value / math.sqrt(d * power))


def _target(text: str):
    try:
        return float(text)
    except ValueError:
        return text


def _text(cal, *, verbose: bool = False, json_path: str | None = None) -> str:
    from scenarios.cli.output import privacy_line

    eps = "∞" if math.isinf(cal.achieved_epsilon) else f"{cal.achieved_epsilon:.6g}"
    value = "—" if cal.value is None else f"{cal.value:.6g}"
    lines = [f"{cal.scheme}: {cal.parameter} = {value} reaches ε = {eps} ≤ {cal.target_epsilon:g} at δ = {cal.delta:g} "
             f"after {cal.rounds} rounds"]
    if not verbose:
        where = json_path if json_path not in (None, "-") else "--verbose or --json FILE"
        lines.append(privacy_line(epsilon=cal.achieved_epsilon, delta=cal.delta, threat_model=cal.threat_model,
                                  accountant=cal.accountant, where=where))
        return "\n".join(lines)
    lines += [f"threat model: {cal.threat_model}", f"accountant: {cal.accountant}"]
    # the report's own threat-model and accountant clauses repeat the two lines above
    lines += [f"  - {a}" for a in cal.assumptions
              if not (a.startswith("threat model:") or a.startswith("accountant:"))]
    return "\n".join(lines)


def _emit(dest: str | None, payload: dict, text: str | None = None) -> None:
    if text and dest != "-":  # "-": the JSON alone on stdout
        print(text)
    if dest:
        write_json(dest, payload)  # "-": stdout; a file: atomically, beside its target (scenarios.store)
