"""Attention arithmetic: the FLOPs of a forward, causal-aware, and achieved TFLOP/s.

A forward is two matmuls, ``Q @ K^T`` and ``P @ V``: ``2*B*H*Sq*Sk*D`` FLOPs
each (``D`` the head dim of V for the second).  A causal mask leaves half of the
score matrix unused, and fused kernels skip it, so causal attention counts half:
``4*B*H*S*S*D / 2`` for the blog's shapes.  The softmax is not counted (the
usual convention, and what FlashAttention's benchmarks report).

Shapes come from, in order of trust:

1. the capture config ``attn-tui capture`` stores in the trace (top-level key
   ``attn_tui``), which applies to its own region (``attn_fwd``);
2. the recorded input shapes (``Input Dims``, with ``record_shapes=True``) of
   the outermost attention op in the region: ``aten::scaled_dot_product_attention``
   and the backend ops below it, ``flash_attn`` and custom ops;
3. the matmul pair of an unfused region (``Q @ K^T`` then ``P @ V``).

Every figure says what it counts (``AttentionWork.convention``): ``causal``, the
useful FLOPs of causal attention (half the scores, what the capture config and an
``is_causal`` flag give), or ``dense``, every score (non-causal attention, or the
work unfused matmuls execute when the trace does not show the mask is causal: a
mask built outside the region leaves causality unknown, and the count is then the
executed one, with a note saying so).  ``source`` says where it was read:
``config``, ``shapes`` (an attention op's input shapes) or ``matmul_shapes``.

Nothing is guessed: a fused op whose causal flag is not recorded, or missing
shapes, give ``None``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from profiling.trace.model import Trace

Rows = Sequence[int] | np.ndarray
"""Trace rows: a list or a numpy index array."""

CONFIG_KEY = "attn_tui"
"""Top-level trace key where ``attn-tui capture`` stores what it measured."""


@dataclass(frozen=True)
class AttentionShape:
    """The shape of the attention in one region instance and where it was read.

    ``calls`` is the number of attention calls per instance with this shape
    (a model layer's region may run several).  ``causal`` is None when the
    trace does not say.  ``source`` says where the numbers come from, for a tooltip.
    """

    batch_heads: int  # B * H (the product of q's leading dimensions)
    seq_q: int
    seq_k: int
    head_dim: int
    head_dim_v: int
    causal: bool | None
    dtype: str | None
    source: str
    calls: int = 1
    batch: int | None = None
    heads: int | None = None
    kind: str = "shapes"  # where it was read: config | shapes | matmul_shapes
    executes_dense: bool = False  # unfused matmuls: every score is computed, masked or not
    bottom_right: bool = False  # causal mask aligned to the last key (FlashAttention's)

    def convention(self) -> str | None:
        """``causal`` (useful FLOPs, half the scores), ``dense`` (every score), or None
        when neither the trace's flag nor the kernels say what is computed."""
        if self.causal is True:
            return "causal"
        if self.causal is False or self.executes_dense:
            return "dense"
        return None

    def flops(self) -> float | None:
        """FLOPs per instance (all calls) in ``convention()``, or None when it is unknown."""
        convention = self.convention()
        if convention is None:
            return None
        scores = float(self.seq_q * self.seq_k)
        if convention == "causal":
            scores = causal_scores(self.seq_q, self.seq_k, self.bottom_right)
        return self.calls * 2.0 * self.batch_heads * scores * (self.head_dim + self.head_dim_v)


def causal_scores(seq_q: int, seq_k: int, bottom_right: bool = False) -> float:
    """The scores a causal mask keeps, as the area of its triangle (so half of a
    square one, the usual convention).  torch's ``is_causal`` aligns the mask to the
    top left (query ``i`` sees keys up to ``i``); FlashAttention's to the bottom
    right (up to ``i + seq_k - seq_q``): a decode step (one query, ``seq_k`` keys)
    then sees every key, where half of ``seq_q * seq_k`` would count half of them."""
    if bottom_right:
        seq_q, seq_k = seq_k, seq_q  # the same triangle, seen from the other corner
    if seq_q <= seq_k:
        return seq_q * seq_q / 2.0
    return seq_q * seq_k - seq_k * seq_k / 2.0


@dataclass(frozen=True)
class _OpSpec:
    layout: str  # "bhsd": [..., S, D]; "bshd": [B, S, H, D]
    causal_at: int | None  # index of is_causal in Concrete Inputs
    mask_type: bool = False  # causal given as custom_mask_type (0 none, 1/2 causal)
    bottom_right: bool = False  # its causal mask is aligned to the last key (FlashAttention)


ATTENTION_OPS: dict[str, _OpSpec] = {
    "aten::scaled_dot_product_attention": _OpSpec("bhsd", 5),
    "aten::_scaled_dot_product_attention_math": _OpSpec("bhsd", 5),
    "aten::_scaled_dot_product_flash_attention": _OpSpec("bhsd", 4),
    "aten::_scaled_dot_product_flash_attention_for_cpu": _OpSpec("bhsd", 4),
    "aten::_scaled_dot_product_efficient_attention": _OpSpec("bhsd", 6),
    "aten::_scaled_dot_product_cudnn_attention": _OpSpec("bhsd", 6),
    "aten::_flash_attention_forward": _OpSpec("bshd", 8),
    "aten::_efficient_attention_forward": _OpSpec("bshd", 9, mask_type=True),
    "flash_attn::_flash_attn_forward": _OpSpec("bshd", 5, bottom_right=True),
    "flash_attn_3::fwd": _OpSpec("bshd", None),
    "attn_tui::flash_attn_fwd": _OpSpec("bshd", 4, bottom_right=True),
}
"""Attention ops whose ``Input Dims`` give the shape: layout of q/k/v and where is_causal is."""

_SHAPED_MATMUL_OPS = ("aten::matmul", "aten::bmm")
"""Matmul ops whose ``Input Dims`` are read as attention's QK^T and PV (their shapes
give S, Sk, D); not ``implementations._MATMUL_OPS``, every op that means "a matmul"."""
_MASK_OPS = ("aten::triu", "aten::tril", "aten::triu_", "aten::tril_")


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def _text_at(concrete: Any, index: int | None) -> str | None:
    if index is None or not isinstance(concrete, list) or index >= len(concrete):
        return None
    return str(concrete[index]).strip()


def _flag(concrete: Any, index: int | None, mask_type: bool) -> bool | None:
    text = _text_at(concrete, index)
    if text is None:
        return None
    if mask_type:
        return {"0": False, "1": True, "2": True}.get(text)
    return {"True": True, "False": False, "1": True, "0": False}.get(text)


def _tensor_dtype(types: Any) -> str | None:
    if isinstance(types, list) and types and isinstance(types[0], str) and types[0]:
        return types[0].replace("c10::", "")
    return None


def stored_config(metadata: dict[str, Any]) -> dict[str, Any] | None:
    """The capture config under ``attn_tui`` (its ``config`` object, or the key itself)."""
    stored = metadata.get(CONFIG_KEY)
    if not isinstance(stored, dict):
        return None
    config = stored.get("config")
    return config if isinstance(config, dict) else stored


def shape_from_config(metadata: dict[str, Any]) -> AttentionShape | None:
    """The shape ``attn-tui capture`` stored (``attn_tui.config``, or flat), else None."""
    config = stored_config(metadata)
    if config is None:
        return None
    batch, heads = _int(config.get("batch")), _int(config.get("heads"))
    seq, dim = _int(config.get("seq")), _int(config.get("head_dim"))
    if batch is None or heads is None or seq is None or dim is None:
        return None
    causal = config.get("causal")
    return AttentionShape(
        batch_heads=batch * heads, seq_q=seq, seq_k=seq, head_dim=dim, head_dim_v=dim,
        causal=causal if isinstance(causal, bool) else None,
        dtype=str(config["dtype"]) if config.get("dtype") else None,
        source="capture config (attn_tui)", batch=batch, heads=heads, kind="config",
    )


def config_region(metadata: dict[str, Any]) -> str | None:
    """The region the stored capture config describes (``attn_fwd``), else None."""
    config = stored_config(metadata)
    if config is None:
        return None
    region = config.get("region", "attn_fwd")
    return region if isinstance(region, str) else None


def config_variant(metadata: dict[str, Any]) -> str | None:
    stored = metadata.get(CONFIG_KEY)
    variant = stored.get("variant") if isinstance(stored, dict) else None
    return variant if isinstance(variant, str) else None


def shape_from_op(name: str, args: dict[str, Any]) -> AttentionShape | None:
    """The shape of one attention op call from its ``Input Dims``, or None if unreadable."""
    spec = ATTENTION_OPS.get(name)
    dims = args.get("Input Dims")
    if spec is None or not isinstance(dims, list) or len(dims) < 3:
        return None
    q, k, v = dims[0], dims[1], dims[2]
    if not all(isinstance(d, list) and d and all(_int(x) for x in d) for d in (q, k, v)):
        return None
    if spec.layout == "bshd":
        if len(q) != 4 or len(k) != 4 or len(v) != 4:
            return None  # varlen [total, H, D]: the sequence lengths are not in the shapes
        batch, seq_q, heads, dim = q
        seq_k, dim_v = k[1], v[3]
    else:
        if len(q) < 2 or len(k) < 2 or len(v) < 2:
            return None
        seq_q, dim = q[-2], q[-1]
        seq_k, dim_v = k[-2], v[-1]
        batch = q[0] if len(q) == 4 else None
        heads = q[1] if len(q) == 4 else None
    concrete = args.get("Concrete Inputs")
    causal = _flag(concrete, spec.causal_at, spec.mask_type)
    # custom_mask_type 2 is CausalFromBottomRight (the efficient kernel's own flag)
    mask_type = _text_at(concrete, spec.causal_at) if spec.mask_type else None
    bottom_right = spec.bottom_right or mask_type == "2"
    batch_heads = batch * heads if spec.layout == "bshd" else math.prod(q[:-2])
    return AttentionShape(
        batch_heads=batch_heads, seq_q=seq_q, seq_k=seq_k, head_dim=dim, head_dim_v=dim_v,
        causal=causal, dtype=_tensor_dtype(args.get("Input type")),
        source=f"input shapes of {name}", batch=batch, heads=heads, bottom_right=bottom_right,
    )


def _outermost(trace: Trace, rows: Rows, names: Iterable[str]) -> list[int]:
    """Rows whose name is in ``names`` and that are not inside another such row (same lane)."""
    wanted = {i for n in names if (i := trace.string_ids(n)) is not None}
    if not wanted:
        return []
    picked: list[int] = []
    open_end: dict[int, int] = {}
    for row in sorted(rows, key=lambda r: (int(trace.lane[r]), int(trace.ts_ns[r]))):
        if int(trace.name_id[row]) not in wanted:
            continue
        lane = int(trace.lane[row])
        if int(trace.ts_ns[row]) < open_end.get(lane, -1):
            continue
        open_end[lane] = int(trace.ts_ns[row] + trace.dur_ns[row])
        picked.append(row)
    return picked


@dataclass(frozen=True)
class AttentionWork:
    """The attention of one region instance: its distinct shapes (each with ``calls``).

    Most regions hold one attention call; a model layer's region may hold several,
    possibly of different shapes, and their FLOPs add up.
    """

    shapes: tuple[AttentionShape, ...]

    @property
    def flops(self) -> float | None:
        """FLOPs per instance, or None when any call's causality is unknown."""
        values = [s.flops() for s in self.shapes]
        if not values or any(v is None for v in values):
            return None
        return float(sum(v for v in values if v is not None))

    @property
    def calls(self) -> int:
        return sum(s.calls for s in self.shapes)

    @property
    def source(self) -> str:
        """Where the shapes were read, in words (``input shapes of aten::...``)."""
        return self.shapes[0].source if self.shapes else ""

    @property
    def kind(self) -> str:
        """``config``, ``shapes`` or ``matmul_shapes`` (``mixed`` when calls differ)."""
        kinds = {s.kind for s in self.shapes}
        return kinds.pop() if len(kinds) == 1 else ("mixed" if kinds else "")

    @property
    def convention(self) -> str | None:
        """``causal`` or ``dense`` (``mixed`` when calls differ); None when unknown."""
        conventions = {s.convention() for s in self.shapes}
        if not conventions or None in conventions:
            return None
        return conventions.pop() if len(conventions) == 1 else "mixed"

    @property
    def note(self) -> str:
        """Why the figure may not be the useful causal count ('' when it says all)."""
        if any(s.causal is None and s.executes_dense for s in self.shapes):
            return ("causal unknown: dense FLOPs (the matmuls compute every score; no "
                    "triu/tril in the region, so a mask, if any, is built outside it)")
        if any(s.convention() is None for s in self.shapes):
            return "causal flag not recorded: FLOPs unknown"
        return ""

    @property
    def dtype(self) -> str | None:
        return self.shapes[0].dtype if self.shapes else None

    @property
    def causal(self) -> bool | None:
        flags = {s.causal for s in self.shapes}
        return flags.pop() if len(flags) == 1 else None


def _fold(shapes: list[AttentionShape]) -> AttentionWork | None:
    """Identical calls fold into one shape with ``calls`` = how many there were."""
    if not shapes:
        return None
    folded: dict[AttentionShape, int] = {}
    for shape in shapes:
        key = replace(shape, calls=1)
        folded[key] = folded.get(key, 0) + shape.calls
    return AttentionWork(tuple(replace(k, calls=n) for k, n in folded.items()))


def work_from_ops(trace: Trace, rows: Rows) -> AttentionWork | None:
    """The attention of one instance from its CPU op rows (None when not readable)."""
    shapes = [s for r in _outermost(trace, rows, ATTENTION_OPS)
              if (s := shape_from_op(trace.name(r), trace.args(r))) is not None]
    if shapes:
        return _fold(shapes)
    pair = shape_from_matmuls(trace, rows)
    return _fold([pair]) if pair is not None else None


def attention_work(trace: Trace, region: str, rows: Rows) -> AttentionWork | None:
    """The attention of one instance of ``region``: the stored capture config for the
    capture's own region, else the instance's op shapes."""
    if region == config_region(trace.metadata):
        shape = shape_from_config(trace.metadata)
        if shape is not None:
            return AttentionWork((shape,))
    return work_from_ops(trace, rows)


def shape_from_matmuls(trace: Trace, rows: Rows) -> AttentionShape | None:
    """Unfused attention: ``[.., S, D] @ [.., D, Sk]`` followed by ``[.., S, Sk] @ [.., Sk, Dv]``.

    The matmuls compute every score, masked or not.  A triu/tril in the region
    shows the mask is causal (useful causal FLOPs, as the capture config counts);
    without one the mask, if any, was built outside the region and causality is
    unknown: ``causal`` is None and the count is the dense work the matmuls execute.
    """
    mats = _outermost(trace, rows, _SHAPED_MATMUL_OPS)
    dims = [trace.args(r).get("Input Dims") for r in mats]
    dtype = None
    for i in range(len(mats) - 1):
        a, b = dims[i], dims[i + 1]
        if not (isinstance(a, list) and isinstance(b, list) and len(a) >= 2 and len(b) >= 2):
            continue
        x, y, p, v = a[0], a[1], b[0], b[1]
        if not all(isinstance(t, list) and len(t) >= 2 for t in (x, y, p, v)):
            continue
        seq_q, dim, seq_k = x[-2], x[-1], y[-1]
        if y[-2] != dim or p[-2:] != [seq_q, seq_k] or v[-2] != seq_k:
            continue
        dtype = _tensor_dtype(trace.args(mats[i]).get("Input type"))
        causal = True if _outermost(trace, rows, _MASK_OPS) else None
        return AttentionShape(
            batch_heads=math.prod(x[:-2]) or 1, seq_q=seq_q, seq_k=seq_k, head_dim=dim,
            head_dim_v=v[-1], causal=causal, dtype=dtype,
            source="matmul shapes (unfused)" + (", causal mask built in region" if causal else ""),
            batch=x[0] if len(x) == 4 else None, heads=x[1] if len(x) == 4 else None,
            kind="matmul_shapes", executes_dense=True,
        )
    return None


def tflops_per_second(flops: float | None, device_time_us: float | None) -> float | None:
    """Achieved TFLOP/s: FLOPs over GPU time (None when either is unknown or zero)."""
    if flops is None or not device_time_us or device_time_us <= 0:
        return None
    return flops / (device_time_us * 1e-6) / 1e12
