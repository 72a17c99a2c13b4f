"""Memory a command will need, estimated from its parameters, and the refusal before allocating.

The estimate adds the largest arrays a command holds at once (float64 = 8 bytes each):

* the sequence set: Walsh–Hadamard builds the L×L Hadamard matrix before keeping N columns
  (8·L² bytes), the other families L×N (random-orthonormal: three L×N arrays for its QR);
* the clients' updates: K×d arrays (updates, normalized copies, the received estimate: 4 of them), or, in a
  training run whose round streams (clip normalization; FLORAS on its sufficient path), one chunk of
  ``training.client_chunk`` updates and a few running d-vector sums;
* one chunk of the uplink: the chip-level path holds y ∈ R^{L×c} and Aᵀy ∈ R^{N×c}, the fast
  path N×c noise (c = min(chunk_size, d) data slots); the audit's T2 uplink holds the whole
  L×d and N×(d+1) blocks of a round (twice: raw and decoded);
* training: the model (d float64 ×8: global model, checkpoint copy, optimizer and evaluation
  buffers), K float32 copies of it in the vectorized trainer (×3: weights, gradients, the
  update), one batch's activations (K·B·max width float32 ×4) and the data set.

It is an estimate of the dominant terms (interpreter, TensorFlow and small arrays are not
counted); the limit it is compared with is the machine's ``MemAvailable`` (``/proc/meminfo``),
or ``--memory-limit SIZE`` / ``FLORAS_MEMORY_LIMIT`` to raise (or lower) it knowingly.
"""

from __future__ import annotations

import os
import re

from scenarios.errors import ResourceLimitError
from scenarios.store.files import format_size

__all__ = [
    "MEMORY_LIMIT_ENV", "parse_size", "format_size", "available_memory", "memory_limit", "sequence_bytes",
    "link_terms", "audit_terms", "pir_terms", "training_terms", "model_dimension", "check_memory",
]

MEMORY_LIMIT_ENV = "FLORAS_MEMORY_LIMIT"
F64 = 8
F32 = 4
_UNITS = {"": 1, "B": 1, "K": 2**10, "KB": 10**3, "KIB": 2**10, "M": 2**20, "MB": 10**6, "MIB": 2**20,
          "G": 2**30, "GB": 10**9, "GIB": 2**30, "T": 2**40, "TB": 10**12, "TIB": 2**40}
# input shape and classes of each data set before loading it (fl.data); the data set's bytes
_DATA = {"digits": ((8, 8, 1), 10, 1797 * 64 * F32), "fashion-mnist": ((28, 28, 1), 10, 70000 * 784 * F32),
         "mnist": ((28, 28, 1), 10, 70000 * 784 * F32)}


def parse_size(text: str | int, *, what: str = "memory-limit") -> int:
    """``"64G"``, ``"512MiB"``, ``"1.5GB"`` or a byte count → bytes (ValueError otherwise)."""
    if isinstance(text, int) and not isinstance(text, bool):
        value = text
    else:
        m = re.fullmatch(r"\s*([0-9]*\.?[0-9]+(?:[eE][0-9]+)?)\s*([A-Za-z]*)\s*", str(text))
        unit = m.group(2).upper() if m else None
        if not m or unit not in _UNITS:
            raise ValueError(f"{what} must be a size such as 8G, 512M or 1000000 (bytes) (got {text!r})")
        value = int(float(m.group(1)) * _UNITS[unit])
    if value < 1:
        raise ValueError(f"{what} must be a positive size (got {text!r})")
    return value


def available_memory() -> int | None:
    """``MemAvailable`` of ``/proc/meminfo`` in bytes (None where it cannot be read)."""
    try:
        with open("/proc/meminfo", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, AttributeError):
        return None


def memory_limit(option: str | int | None = None) -> tuple[int | None, str]:
    """The limit and where it came from: the option, else ``FLORAS_MEMORY_LIMIT``, else MemAvailable."""
    if option is not None:
        return parse_size(option), "--memory-limit"
    env = os.environ.get(MEMORY_LIMIT_ENV)
    if env:
        return parse_size(env, what=MEMORY_LIMIT_ENV), MEMORY_LIMIT_ENV
    return available_memory(), "available memory (MemAvailable)"


def sequence_bytes(family: str, *, L: int, N: int) -> int:
    if family == "walsh-hadamard":
        return F64 * (L * L + L * N)
    if family == "random-orthonormal":
        return 3 * F64 * L * N
    return 2 * F64 * L * N


def _chunk_terms(*, L: int, N: int, d: int, chunk_size: int, chip_level: bool) -> int:
    c = max(1, min(int(chunk_size), int(d)))
    return F64 * c * ((L + N) if chip_level else N) * 2


def link_terms(*, K: int, N: int, L: int, d: int, sequences: str, chunk_size: int, path: str = "auto",
               schemes=("floras",)) -> dict[str, int]:
    """Dominant allocations of ``floras link`` (bytes, by term)."""
    terms = {"K×d client updates (×4)": 4 * F64 * K * d, "d-vectors of the estimate (×4)": 4 * F64 * d}
    if "floras" in schemes:
        terms[f"sequence set ({sequences}, L={L}, N={N})"] = sequence_bytes(sequences, L=L, N=N)
        terms["one chunk of the uplink"] = _chunk_terms(L=L, N=N, d=d, chunk_size=chunk_size, chip_level=path == "chip")
    return terms


def audit_terms(*, K: int, N: int, L: int, d: int, sequences: str, threat: str, sweep_Ns=(), trials: int = 0,
                rounds: int = 0, rx_antennas: int = 1) -> dict[str, int]:
    """Dominant allocations of ``floras audit`` (bytes, by term).

    ``trials``: the game keeps 2 × trials float64 scores. ``rounds`` (T2): the measurement keeps
    every round's base-station view and truth for linking (L×(d+1) chips, N×(d+1) despread
    outputs, K×(d+2) truth values) plus an N-wide detector row, so both are named in a refusal.
    ``rx_antennas`` N_r (the largest of a sweep): chips and despread outputs of every antenna (model §5.2).
    """
    n_rx = max(1, int(rx_antennas))
    n_max = max([N, *sweep_Ns])
    terms = {f"sequence set ({sequences}, L={L}, N={n_max})": sequence_bytes(sequences, L=L, N=n_max),
             "K×d client updates (×4)": 4 * F64 * K * d}
    if trials:
        terms[f"game scores (2 worlds × --trials {trials})"] = 2 * F64 * int(trials)
    if threat == "T2":
        terms["L×d chips and N×(d+1) despread outputs of a round (×2)"] = 2 * F64 * (L * d + n_max * (d + 1)) * n_rx
        if rounds:
            per_round = F64 * (n_rx * (L * (d + 1) + n_max * (d + 1)) + K * (d + 3)) + 9 * n_max
            terms[f"--rounds {rounds} T2 round views kept for linking"] = int(rounds) * per_round
    return terms


def model_dimension(config) -> int | None:
    """d of a scenario's model from the data set's nominal shape (None if unknown before loading)."""
    from fl.models import build_model_spec

    data, model = config.data, config.model
    if data.name == "synthetic":
        shape, classes = (int(data.synthetic_features),), int(data.synthetic_classes)
    elif data.name == "fedprox":
        shape, classes = (int(data.fedprox.features),), int(data.fedprox.classes)
    elif data.name in _DATA:
        shape, classes, _ = _DATA[data.name]
    else:
        return None
    spec = build_model_spec(model.name, input_shape=shape, num_classes=classes, hidden=model.hidden,
                            channels=model.channels, kernel_size=model.kernel_size)
    return spec.d


def pir_terms(*, rs, ss, Ns, snr_dbs, verify: bool, iterations: int) -> dict[str, int]:
    """Dominant allocations of ``floras pir`` (bytes, by term): the cost table of the grid, and with
    ``verify`` the databases, the kept views of every iteration and the code matrix of one (r, s, N)."""
    rows = len(rs) * len(ss) * len(Ns) * len(snr_dbs)
    terms = {f"cost table ({rows} rows of the --r × --s × --N × --snr-db grid, JSON)": 4096 * rows}
    if verify:
        r, s, N = int(rs[0]), int(ss[0]), int(Ns[0])
        terms[f"--N {N} databases × (r + s) × s symbols (×2)"] = 2 * F64 * N * (r + s) * s
        terms[f"--iterations {iterations} × N views kept"] = F64 * int(iterations) * N * (r * s + 4 * (r + s))
        terms["(r + s)² code matrix and its inverse (×3)"] = 3 * F64 * (r + s) ** 2
    return terms


def _streams(config) -> bool:
    """Whether a run's round reaches the aggregator chunk by chunk (``aggregate_stream``, docs/fl.md): clip
    normalization, and for FLORAS its sufficient-statistic path (orthonormal sequences, one coherence block, one
    receive antenna); the ``paper`` rule, FLORAS's chip and fast paths, coherence blocks and antennas gather K×d."""
    phy = config.phy
    if phy.normalization != "clip":
        return False
    if phy.scheme == "floras":
        p = phy.of("floras")
        return (p.path in ("auto", "sufficient") and p.sequences != "pn" and phy.coherence_symbols is None
                and phy.rx_antennas == 1)
    return True


def _update_terms(config, *, K: int, chunk: int, d: int) -> dict[str, int]:
    if _streams(config):
        return {f"{chunk}×d chunk of updates (×2) and the running sums (×4), float64": F64 * d * (2 * chunk + 4)}
    return {"K×d updates and estimate (×4, float64)": 4 * F64 * K * d}


def training_terms(config) -> dict[str, int]:
    """Dominant allocations of one training run of ``config`` (bytes, by term)."""
    d = model_dimension(config)
    if d is None:
        return {}
    K, B = config.training.clients_per_round, config.training.batch_size
    chunk = min(K, config.training.client_chunk or K)  # clients trained together (training.client_chunk)
    phy, data = config.phy, config.data
    width = max([*config.model.hidden, *config.model.channels, 1])
    terms = {
        f"model (d = {d}) and its copies (×8)": 8 * F64 * d,
        **_update_terms(config, K=K, chunk=chunk, d=d),
        f"{chunk} model copies in the trainer (×3, float32)": 3 * F32 * chunk * d,
        "one batch's activations": 4 * F32 * chunk * B * width,
    }
    if data.name in _DATA:
        terms["data set"] = _DATA[data.name][2]
    elif data.name == "synthetic":
        terms["data set"] = F32 * int(data.synthetic_samples) * int(data.synthetic_features) * 2
    elif data.name == "fedprox":  # clients generated one at a time; a chunk keeps the rows its batches use
        f, S = data.fedprox, int(config.training.local_steps or 1)
        terms["one chunk's client rows, one client's draws and the test set"] = int(f.features) * (
            F32 * chunk * min(int(f.max_size), S * B) + (F64 + F32) * int(f.max_size)
            + F32 * (int(f.test_clients) * int(f.test_per_client) + config.training.train_eval_size))
    if phy.scheme == "floras":  # the one scheme with a sequence set and chip-level chunks (model §6.1)
        f = phy.of("floras")
        terms[f"sequence set ({f.sequences}, L={phy.L}, N={f.N})"] = sequence_bytes(f.sequences, L=phy.L, N=f.N)
        terms["one chunk of the uplink"] = _chunk_terms(L=phy.L, N=f.N, d=d, chunk_size=phy.chunk_size,
                                                        chip_level=f.path == "chip")
    return terms


def check_memory(terms: dict[str, int], *, what: str, option: str | int | None = None, copies: int = 1) -> int:
    """Raise :class:`ResourceLimitError` if ``copies`` × the sum of ``terms`` exceeds the limit.

    Returns the estimate in bytes. The message gives the estimate and its two largest terms.
    """
    total = copies * sum(terms.values())
    limit, source = memory_limit(option)
    if limit is None or total <= limit:
        return total
    top = sorted(terms.items(), key=lambda kv: -kv[1])[:2]
    parts = ", ".join(f"{name} {format_size(b)}" for name, b in top)
    times = f"{copies} concurrent runs × " if copies > 1 else ""
    raise ResourceLimitError(
        f"{what} would need about {times}{format_size(total / copies)} of memory ({parts}) but the limit is "
        f"{format_size(limit)} ({source}); reduce the sizes, or raise the limit knowingly with "
        f"--memory-limit SIZE or {MEMORY_LIMIT_ENV}=SIZE")
