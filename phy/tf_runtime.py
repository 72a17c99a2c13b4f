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
    """The host allocator TensorFlow runs with in this process, for run records: ``"bfc"`` (it keeps statistics,
    ``tf.config.experimental.get_memory_info("CPU:0")``), ``"default"`` (it keeps none), or ``"unknown (TensorFlow
    not imported)"``."""
    if "tensorflow" not in sys.modules:
        return "unknown (TensorFlow not imported)"
    import tensorflow as tf

    try:
        tf.config.experimental.get_memory_info("CPU:0")
    except ValueError:
        return "default"
    return "bfc"
