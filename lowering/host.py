"""What the compiling machine's CPU offers the code generator: its vector register width and its last-level cache.

The JIT compiles for the host CPU (LLVM's host detection), so vector code
sized for the host's registers is what runs.  The width is read from the
operating system's report of the CPU's features, never assumed:
AVX-512 -> 512 bits, AVX/AVX2 -> 256, other x86-64 (SSE2) and AArch64 NEON -> 128.
``GRAPHFUSE_VECTOR_BITS`` overrides the detection (e.g. to compile for a
narrower machine's register file).
"""

from __future__ import annotations

import os
import platform
from functools import cache
from pathlib import Path

from graphfuse.pipelines import log

__all__ = ["VECTOR_BITS_VARIABLE", "last_level_cache_bytes", "vector_bits", "vector_bits_from_flags"]

#: Environment variable that overrides the detected vector register width (bits: 128, 256 or 512).
VECTOR_BITS_VARIABLE = "GRAPHFUSE_VECTOR_BITS"
_WIDTHS = (128, 256, 512)


def vector_bits_from_flags(flags: set[str], machine: str) -> int:
    """The widest vector register width a CPU with these feature flags (``/proc/cpuinfo`` names) offers."""
    if machine in {"x86_64", "amd64", "i686"}:
        if "avx512f" in flags:
            return 512
        if "avx2" in flags or "avx" in flags:
            return 256
    return 128


def _cpu_flags() -> set[str]:
    try:
        text = Path("/proc/cpuinfo").read_text(errors="replace")
    except OSError:
        return set()
    for line in text.splitlines():
        key, _, value = line.partition(":")
        if key.strip() in {"flags", "Features"}:
            return set(value.split())
    return set()


@cache
def vector_bits() -> int:
    """The host's vector register width in bits (``GRAPHFUSE_VECTOR_BITS`` when set to 128, 256 or 512)."""
    override = os.environ.get(VECTOR_BITS_VARIABLE, "").strip()
    if override:
        if override.isdigit() and int(override) in _WIDTHS:
            return int(override)
        # A bad override is ignored (with the reason at debug level) rather than failing every compile.
        log.debug(f"{VECTOR_BITS_VARIABLE}={override!r} is not one of {_WIDTHS}: using the detected width")
    return vector_bits_from_flags(_cpu_flags(), platform.machine().lower())


@cache
def last_level_cache_bytes() -> int:
    """The largest cache the OS lists for cpu0, in bytes (0 when it lists none)."""
    best = 0
    for index in Path("/sys/devices/system/cpu/cpu0/cache").glob("index*"):
        try:
            text = (index / "size").read_text().strip()
        except OSError:
            continue
        scale = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(text[-1:], 1)
        digits = text.rstrip("KMG")
        if digits.isdigit():
            best = max(best, int(digits) * scale)
    return best
