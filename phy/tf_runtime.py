"""TensorFlow's process-wide settings the simulator runs with, set before TensorFlow allocates (docs/fl.md,
"TensorFlow's host allocator").

TensorFlow reads these from the environment once, when it first allocates on the CPU, so they are set as
defaults when :mod:`phy`, :mod:`fl` or :mod:`scenarios` is imported (all three import TensorFlow only inside the
functions that need it).
A value the user has already set is kept (``os.environ.setdefault``): ``TF_CPU_ALLOCATOR_USE_BFC=0`` restores
TensorFlow's default allocator.

``TF_CPU_ALLOCATOR_USE_BFC=1``: TensorFlow's best-fit-with-coalescing allocator for host memory, which keeps
freed blocks for the next tensor of that size, instead of the default allocator's ``malloc`` per tensor. The batched
trainer makes tensors of c·d floats at every local step (64 MB for a chunk of 100 clients of the 784-200-10 MLP);
``malloc`` serves each from fresh pages (above its mapping threshold) and returns them on free, so each step paid
page faults on every such tensor: measured on 2 cores, a chunked training pass of 400 clients took 2.45–2.61 s with
3.7 million minor page faults against 1.35–1.43 s and 0.16 million with BFC, the updates identical bit for bit
(the allocator changes where a tensor lives, not a single operation on it; the test suite checks results under it).
Memory: the allocator keeps its high-water mark of tensors (bounded by one chunk's working set) until the
process ends.
"""

from __future__ import annotations

import os
import sys

__all__ = ["TENSORFLOW_DEFAULTS", "set_tensorflow_defaults", "host_allocator"]

TENSORFLOW_DEFAULTS = {"TF_CPU_ALLOCATOR_USE_BFC": "1"}


def set_tensorflow_defaults() -> None:
    """Set :data:`TENSORFLOW_DEFAULTS` in ``os.environ`` where the variable is not set already (no effect on a
    TensorFlow that has allocated before)."""
    for name, value in TENSORFLOW_DEFAULTS.items():
        os.environ.setdefault(name, value)


def host_allocator() -> str:
    """The host allocator TensorFlow runs with in this process, for run records: ``"bfc"`` (the BFC allocator,
    ``TF_CPU_ALLOCATOR_USE_BFC`` true), ``"onednn"`` (TensorFlow's default where oneDNN is on: oneDNN's CPU allocator,
    BFC for large blocks), ``"default"`` (TensorFlow's default without oneDNN, ``malloc`` per tensor), or
    ``"unknown (TensorFlow not imported)"``.

    Observed, not assumed, where it can be: only the first two keep statistics
    (``tf.config.experimental.get_memory_info("CPU:0")`` raises ValueError under the third); which of the two is
    told by the variable as TensorFlow reads it (``1``/``true`` in any case), which the process is assumed not to
    have changed after TensorFlow's first allocation.
    """
    if "tensorflow" not in sys.modules:
        return "unknown (TensorFlow not imported)"
    import tensorflow as tf

    try:
        tf.config.experimental.get_memory_info("CPU:0")
    except ValueError:
        return "default"
    if os.environ.get("TF_CPU_ALLOCATOR_USE_BFC", "").strip().lower() in ("1", "true"):
        return "bfc"
    return "onednn"
