"""Where the ``kernels`` variant's flash-attention kernel comes from.

``--kernel-repo`` names a hub repository (``owner/name``, optionally ``@VERSION``;
default ``kernels-community/flash-attn2`` at version 2, since ``kernels`` wants an
explicit version) or a local folder in the ``kernels`` layout
(``build/<variant>/__init__.py`` + ``metadata.json``).  When the hub is out of
reach, as on machines without network, the project's own Triton kernel in
``flash_kernel/`` is loaded instead through ``LOCAL_KERNELS``, and the manifest
says so: a trace should never pretend to be FlashAttention-2 when it is not.

An explicitly requested hub repository that the hub answers for but cannot
serve to this machine is not replaced silently: the variant is skipped with the
library's reason.
"""

from __future__ import annotations

import os
import re
import socket
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from types import ModuleType
from typing import Any
from urllib.parse import urlparse

from profiling.errors import CaptureError

DEFAULT_KERNEL_REPO = "kernels-community/flash-attn2"
DEFAULT_KERNEL_VERSION = 2
BUNDLED_REPO_ID = "attn-tui/flash-attn-triton"
BUNDLED_VERSION = 1
_REPO_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+(@\d+)?$")


class KernelUnavailable(Exception):
    """The kernel cannot be loaded here; the message is the skip reason."""


@dataclass(frozen=True)
class KernelSource:
    """What was asked for, what was loaded, and why they differ (if they do)."""

    requested: str
    loaded: str
    how: str
    path: str | None = None
    name: str | None = None
    fallback_reason: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    def short(self) -> str:
        if self.fallback_reason:
            return f"{self.loaded} (fallback: {self.fallback_reason})"
        return self.loaded


def bundled_kernel_dir() -> Path:
    """The project's own Triton flash-attention kernel, in the ``kernels`` layout."""
    return Path(__file__).resolve().parent / "flash_kernel"


def parse_kernel_repo(text: str | None) -> tuple[str, Path | None, int]:
    """Split ``--kernel-repo`` into (repo id or folder text, folder or None, version).

    Raises ``CaptureError`` for text that is neither an existing folder nor a repo id,
    so a typo fails before any GPU work starts.
    """
    if text is None:
        return DEFAULT_KERNEL_REPO, None, DEFAULT_KERNEL_VERSION
    path = Path(text).expanduser()
    if path.is_dir():
        return text, path.resolve(), 0
    if _REPO_ID.match(text) and not path.exists():
        repo, _, version = text.partition("@")
        return repo, None, int(version) if version else DEFAULT_KERNEL_VERSION
    raise CaptureError(
        "not a folder and not a hub repo id",
        f"--kernel-repo {text}",
        "give owner/name[@version] or a folder holding build/<variant>/metadata.json",
    )


def hub_reachable(timeout_s: float = 3.0) -> str | None:
    """None when the hub's host answers a TCP connect; else why not (one line)."""
    from huggingface_hub import constants

    if constants.HF_HUB_OFFLINE:
        return "HF_HUB_OFFLINE is set"
    host = urlparse(constants.ENDPOINT).hostname or "huggingface.co"
    try:
        with socket.create_connection((host, 443), timeout=timeout_s):
            return None
    except OSError as exc:
        return f"{host} unreachable ({exc.__class__.__name__}: {exc})"


@contextmanager
def _local_kernels_entry(repo_id: str, path: Path):
    """Add ``repo_id=path`` to ``LOCAL_KERNELS`` for the duration of one load."""
    before = os.environ.get("LOCAL_KERNELS")
    entry = f"{repo_id}={path}"
    os.environ["LOCAL_KERNELS"] = f"{entry}:{before}" if before else entry
    try:
        yield
    finally:
        if before is None:
            os.environ.pop("LOCAL_KERNELS", None)
        else:
            os.environ["LOCAL_KERNELS"] = before


def _import_kernels() -> ModuleType:
    try:
        import kernels
    except ImportError as exc:
        raise KernelUnavailable(
            f"the 'kernels' library is not installed ({exc}); pip install 'attn-tui[capture]'"
        ) from None
    return kernels


def load_bundled(reason: str | None, requested: str) -> tuple[ModuleType, KernelSource]:
    """Load ``flash_kernel/`` by repo id through ``LOCAL_KERNELS`` (no network)."""
    kernels = _import_kernels()
    path = bundled_kernel_dir()
    try:
        with _local_kernels_entry(BUNDLED_REPO_ID, path):
            module = kernels.get_kernel(BUNDLED_REPO_ID, version=BUNDLED_VERSION)
    except Exception as exc:  # the library raises many types; all mean "not loadable"
        raise KernelUnavailable(f"bundled Triton kernel not loadable: {_one_line(exc)}") from exc
    source = KernelSource(
        requested=requested,
        loaded=f"{BUNDLED_REPO_ID}@{BUNDLED_VERSION} (attn-tui's Triton kernel)",
        how="kernels.get_kernel via LOCAL_KERNELS",
        path=str(path),
        name=_kernel_name(module),
        fallback_reason=reason,
    )
    return module, source


def load_flash_kernel(kernel_repo: str | None) -> tuple[ModuleType, KernelSource]:
    """Load a module exposing ``flash_attn_func``; raise KernelUnavailable with the reason."""
    repo, folder, version = parse_kernel_repo(kernel_repo)
    kernels = _import_kernels()
    if folder is not None:
        try:
            module = kernels.get_local_kernel(folder)
        except Exception as exc:
            raise KernelUnavailable(f"{folder}: not loadable: {_one_line(exc)}") from exc
        source = KernelSource(requested=str(folder), loaded=str(folder),
                              how="kernels.get_local_kernel", path=str(folder),
                              name=_kernel_name(module))
        return _checked(module, source)

    requested = f"{repo}@{version}"
    unreachable = hub_reachable()
    if unreachable is not None:
        return _checked(*load_bundled(f"hub out of reach: {unreachable}", requested))
    try:
        module = kernels.get_kernel(repo, version=version)
    except Exception as exc:
        if kernel_repo is None:
            return _checked(*load_bundled(f"{requested} not loadable: {_one_line(exc)}", requested))
        raise KernelUnavailable(f"{requested} not loadable: {_one_line(exc)}") from exc
    source = KernelSource(requested=requested, loaded=requested, how="kernels.get_kernel",
                          name=_kernel_name(module))
    return _checked(module, source)


def _checked(module: ModuleType, source: KernelSource) -> tuple[ModuleType, KernelSource]:
    if not callable(getattr(module, "flash_attn_func", None)):
        raise KernelUnavailable(f"{source.loaded} has no flash_attn_func")
    return module, source


def _kernel_name(module: ModuleType) -> str | None:
    try:
        import kernels

        for loaded in kernels.get_loaded_kernels():
            if loaded.module is module:
                return str(loaded.metadata.name)
    except Exception:
        return None
    return None


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    first = text[0] if text else exc.__class__.__name__
    return first if len(first) <= 300 else first[:297] + "..."
