"""Names are data: make trace strings safe to show, and shorten kernel names.

Nothing here imports Textual, and Rich only for its table of character widths
(``cells``: what Textual measures with); widgets turn the results into ``Text`` or
``Segment`` objects (never markup), so ``[bold]`` in a kernel name shows as is.
Widths are terminal cells, not characters: a CJK character or an emoji takes two,
so a name cut or padded by ``len`` pushes the rest of its line right.
"""

from __future__ import annotations

import re
from functools import lru_cache

# C0 and C1 controls, DEL, and the Unicode line/paragraph separators and bidi
# overrides: anything a terminal would act on instead of showing.  Then the
# invisible format characters (zero-width space and joiners, direction marks, word
# joiner, BOM, soft hyphen, tag characters): nothing to see, and terminals disagree
# on their width, so a name holding one shifted every column after it in a table.
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069"
                      "\u00ad\u061c\u180e\u200b-\u200f\u2060-\u2064\ufeff\ufff9-\ufffb"
                      "\U000e0001\U000e0020-\U000e007f]")
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t", "\x1b": "\\x1b"}


def _escape_one(match: re.Match[str]) -> str:
    ch = match.group(0)
    named = _NAMED.get(ch)
    if named is not None:
        return named
    code = ord(ch)
    if code < 0x100:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


@lru_cache(maxsize=65536)
def visible(text: str) -> str:
    """``text`` with every control character written out (``\\x1b``, ``\\n``, ...)."""
    if not isinstance(text, str):
        text = str(text)
    return _CONTROL.sub(_escape_one, text)


OWN_NARROW = "…›─µ·←→"
"""Characters this program writes around names (ellipsis, launch-chain separator,
rules, microseconds, arrows): one cell each in Rich's table (a test holds it)."""
_OWN_AS_ASCII = str.maketrans(dict.fromkeys(OWN_NARROW, "a"))


def one_cell_each(text: str) -> bool:
    """Whether every character of ``text`` takes one cell: ASCII, or ASCII with the
    program's own ``OWN_NARROW``.  WHY: a listing's launch chains all hold `` › ``,
    and measuring them by Rich's width table cost its import (3 ms of a reopened
    ``kernels``' 270 ms) when ``len`` gives the same answer."""
    return text.isascii() or text.translate(_OWN_AS_ASCII).isascii()


def cells(text: str) -> int:
    """How many terminal cells ``text`` takes (Rich's measure, the one Textual draws by)."""
    if one_cell_each(text):
        return len(text)
    from rich.cells import cell_len

    return cell_len(text)


def clip(text: str, width: int) -> str:
    """``text`` cut to at most ``width`` cells, with an ellipsis when it does not fit.

    Counted in cells: ``宽字符`` is six, so a label cut by characters would
    overrun its column and shift the events drawn after it."""
    if width <= 0:
        return ""
    if one_cell_each(text):
        return text if len(text) <= width else ("…" if width == 1 else text[: width - 1] + "…")
    if cells(text) <= width:
        return text
    from rich.cells import get_character_cell_size

    kept: list[str] = []
    used = 0
    for ch in text:
        size = get_character_cell_size(ch)
        if used + size > width - 1:
            break
        kept.append(ch)
        used += size
    return "".join(kept) + "…"


def fit(text: str, width: int) -> str:
    """``text`` cut (``clip``) and padded with spaces to exactly ``width`` cells."""
    shown = clip(text, width)
    return shown + " " * max(0, width - cells(shown))


_NAMESPACE = re.compile(r"\b(?:[A-Za-z_]\w*::)+(?=[A-Za-z_~{])")
_ANON = re.compile(r"\(anonymous namespace\)::")
_OPERATOR_CALL = re.compile(r"::operator\(\)\(\)(?: const)?")
_LAMBDA = re.compile(r"\{lambda\((?:[^()]|\([^()]*\))*\)#\d+\}")
_PARAMS = re.compile(r"\((?:[^()]|\([^()]*\))*\)(?=::)")
_REPEAT_LAMBDA = re.compile(r"(?:::λ)+")


def _strip_args(name: str) -> str:
    """Drop a trailing top-level parameter list ``(...)`` (C++ signature)."""
    if not name.endswith(")"):
        return name
    depth = 0
    angle = 0
    for i in range(len(name) - 1, -1, -1):
        ch = name[i]
        if ch == ")":
            depth += 1
        elif ch == "(":
            depth -= 1
            if depth == 0:
                head = name[:i]
                # keep "operator()" and empty heads as they are
                if not head or head.endswith("operator"):
                    return name
                return head
        elif ch == ">":
            angle += 1
        elif ch == "<":
            angle -= 1
    return name


def _collapse_templates(name: str, keep_depth: int) -> str:
    """Replace template arguments nested deeper than ``keep_depth`` with ``…``."""
    out: list[str] = []
    depth = 0
    for ch in name:
        if ch == "<":
            depth += 1
            if depth <= keep_depth:
                out.append(ch)
            elif depth == keep_depth + 1:
                out.append("<…")
            continue
        if ch == ">":
            if depth <= keep_depth + 1:
                out.append(ch)
            depth = max(0, depth - 1)
            continue
        if depth <= keep_depth:
            out.append(ch)
    return "".join(out)


@lru_cache(maxsize=16384)
def short_name(name: str, limit: int = 60) -> str:
    """A kernel or op name a person can read in a column.

    ``void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>,
    ...>(int, ...)`` becomes ``vectorized_elementwise_kernel<4, FillFunctor<…>, …>``:
    no return type, no parameter list, no namespaces, and template arguments
    collapsed from the inside out until the name fits ``limit``.
    Plain names (``aten::bmm``, ``Memcpy HtoD (Pageable -> Device)``) stay as they are.
    """
    text = visible(name)
    if "<" not in text and not text.startswith("void ") and "::" not in text[:1]:
        if not re.search(r"\w+::\w+.*\(", text) or text.startswith(("aten::", "Memcpy", "Memset")):
            return text
    s = text
    if s.startswith("void "):
        s = s[5:]
    s = _strip_args(s)
    s = _ANON.sub("", s)
    s = _OPERATOR_CALL.sub("", s)
    s = _LAMBDA.sub("λ", s)
    s = _PARAMS.sub("", s)
    s = _REPEAT_LAMBDA.sub("::λ", s)
    s = s.replace(" >", ">")
    if "<" in s or s.count("::") > 1:
        s = _NAMESPACE.sub("", s)
    for keep in (3, 2, 1):
        if len(s) <= limit:
            break
        s = _collapse_templates(s, keep)
    if len(s) > limit:
        s = _trim_template_args(s, limit)
    return s.strip() or text


def _trim_template_args(name: str, limit: int) -> str:
    """Keep the leading template arguments that fit: ``f<a, b, …>``."""
    open_at = name.find("<")
    if open_at < 0 or not name.endswith(">"):
        return name
    head, body = name[: open_at + 1], name[open_at + 1 : -1]
    args: list[str] = []
    depth = 0
    start = 0
    for i, ch in enumerate(body):
        if ch == "<":
            depth += 1
        elif ch == ">":
            depth -= 1
        elif ch == "," and depth == 0:
            args.append(body[start:i].strip())
            start = i + 1
    args.append(body[start:].strip())
    kept: list[str] = []
    for arg in args:
        candidate = head + ", ".join([*kept, arg]) + ", …>"
        if len(candidate) > limit:
            break
        kept.append(arg)
    if len(kept) == len(args):
        return name
    if not kept:  # Kernel2<cutlass_80_wmma_...>: the first argument is the informative part
        room = limit - len(head) - 1
        if room >= 8:
            return head + clip(args[0], room) + ">"
    return head + ", ".join([*kept, "…"]) + ">"
