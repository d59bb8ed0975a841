"""Checks of arrays read back from the index before anything indexes the trace by them.

A stored part damaged on disk (a bit flip keeps the file readable) or written for
another trace must be refused and recomputed, never used: each check raises
ValueError, which ``AnalysedTrace.stored`` and ``analysis_store`` take as "build it
again".  One set of checks for every stored part (``analysis_parts``, the launch
batches of ``chains``, the ``kernels`` columns of ``instance_kernels``).
"""

from __future__ import annotations

import numpy as np


def check_within(values: np.ndarray, lo: int, hi: int) -> None:
    """ValueError unless ``values`` is a column whose every value is in [lo, hi)."""
    if values.ndim != 1:
        raise ValueError("not a column")
    if values.size and (int(values.min()) < lo or int(values.max()) >= hi):
        raise ValueError("stored values out of range")


def check_pointers(ptr: np.ndarray, total: int, count: int) -> None:
    """ValueError unless ``ptr`` cuts ``total`` entries into ``count`` runs."""
    if (ptr.ndim != 1 or ptr.shape[0] != count + 1 or int(ptr[0]) != 0
            or int(ptr[-1]) != total or bool(np.any(np.diff(ptr) < 0))):
        raise ValueError("stored run boundaries damaged")


def check_ints(arrays: dict[str, np.ndarray], *names: str) -> None:
    """ValueError unless the arrays ``names`` hold int32 or int64 (row indexes are
    stored narrow where they fit: ``model.narrow``)."""
    if any(arrays[n].dtype not in (np.int32, np.int64) for n in names):
        raise ValueError("stored indexes of the wrong type")
