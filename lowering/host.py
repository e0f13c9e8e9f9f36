"""What the compiling machine offers the code generator: its vector register width, its last-level cache, the threads
compiled code runs on and the footprint from which stores stream past the caches.

The JIT compiles for the host CPU (LLVM's host detection), so vector code
sized for the host's registers is what runs.  The width is read from the
operating system's report of the CPU's features, never assumed:
AVX-512 -> 512 bits, AVX/AVX2 -> 256, other x86-64 (SSE2) and AArch64 NEON -> 128.
``GRAPHFUSE_VECTOR_BITS`` overrides the detection (e.g. to compile for a
narrower machine's register file), ``GRAPHFUSE_DOT_PRODUCTS`` the dot-product
instructions products may use (AVX512_BF16's ``vdpbf16ps``: ``bf16``;
AVX512_VNNI's ``vpdpbusd``: ``int8``);
``GRAPHFUSE_NUM_THREADS`` and
``GRAPHFUSE_STREAM_MIN_BYTES`` the thread count and the streaming threshold.
Reading these is all this module does: it stays light, for the tools that
resolve a compile's options without compiling.
"""

from __future__ import annotations

import os
import platform
from functools import cache
from pathlib import Path

from graphfuse.dialect.diagnostics import GraphfuseError
from graphfuse.pipelines import log

__all__ = [
    "CODEGEN_JOBS_VARIABLE",
    "DOT_PRODUCTS_VARIABLE",
    "DOT_PRODUCT_CHOICES",
    "MAX_THREADS",
    "STREAM_VARIABLE",
    "THREADS_VARIABLE",
    "VECTOR_BITS_VARIABLE",
    "check_thread_count",
    "chosen_dot_products",
    "codegen_jobs",
    "cpuinfo",
    "default_threads",
    "dot_product_choice_problem",
    "dot_products",
    "dot_products_from_flags",
    "last_level_cache_bytes",
    "stream_min_bytes",
    "vector_bits",
    "vector_bits_from_flags",
]

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


@cache
def cpuinfo() -> dict[str, str]:
    """The fields ``/proc/cpuinfo`` gives the first processor (empty where there is no such file)."""
    fields: dict[str, str] = {}
    try:
        text = Path("/proc/cpuinfo").read_text(errors="replace")
    except OSError:
        return fields
    for line in text.splitlines():
        if not line.strip():
            if fields:
                break  # the first processor describes them all
            continue
        key, _, value = line.partition(":")
        fields.setdefault(key.strip(), value.strip())
    return fields


def _cpu_flags() -> set[str]:
    info = cpuinfo()
    return set(info.get("flags", info.get("Features", "")).split())


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


#: Environment variable naming the dot-product instructions compiled code may use, comma-separated (``bf16``,
#: ``int8``), or ``none``: a subset of the host's, to compile the code of a machine without them.
DOT_PRODUCTS_VARIABLE = "GRAPHFUSE_DOT_PRODUCTS"
#: Dot-product instruction sets by the ``/proc/cpuinfo`` flag that announces them.
_DOT_FLAGS = {"bf16": "avx512_bf16", "int8": "avx512_vnni"}


def dot_products_from_flags(flags: set[str], machine: str) -> frozenset[str]:
    """The dot-product instructions a CPU with these feature flags offers, with AVX-512 itself: ``bf16`` for
    AVX512_BF16's ``vdpbf16ps`` (pairs of bf16 products summed into f32 lanes), ``int8`` for AVX512_VNNI's
    ``vpdpbusd`` (quads of unsigned by signed byte products summed into i32 lanes)."""
    if machine not in {"x86_64", "amd64"} or "avx512f" not in flags:
        return frozenset()
    return frozenset(name for name, flag in _DOT_FLAGS.items() if flag in flags)


@cache
def dot_products() -> frozenset[str]:
    """The host's dot-product instructions the code generator may use (:func:`dot_products_from_flags`), narrowed
    by ``GRAPHFUSE_DOT_PRODUCTS`` when set; none when the vector width is overridden below 512 bits."""
    found = dot_products_from_flags(_cpu_flags(), platform.machine().lower())
    if vector_bits() < 512:
        return frozenset()
    override = os.environ.get(DOT_PRODUCTS_VARIABLE, "").strip().lower()
    if not override:
        return found
    asked = frozenset() if override == "none" else frozenset(p.strip() for p in override.split(",") if p.strip())
    unknown = asked - set(_DOT_FLAGS)
    if unknown:
        log.debug(f"{DOT_PRODUCTS_VARIABLE}={override!r}: {', '.join(sorted(unknown))} unknown, ignored")
    return found & asked


#: The values of the passes' ``dot-products`` option: the host's (:func:`dot_products`), none, or instruction sets
#: joined by ``+`` (``bf16``, ``int8``, ``bf16+int8``).
DOT_PRODUCT_CHOICES = ("host", "none", *sorted(_DOT_FLAGS), "+".join(sorted(_DOT_FLAGS)))


def dot_product_choice_problem(pass_name: str, choice: str) -> str | None:
    """Why ``choice`` is not a value of pass ``pass_name``'s ``dot-products`` option, or None."""
    if choice in ("host", "none") or (choice and all(part in _DOT_FLAGS for part in choice.split("+"))):
        return None
    return (f"option 'dot-products' of pass '{pass_name}' must be host, none or instruction sets joined by '+' "
            f"({', '.join(sorted(_DOT_FLAGS))}), got '{choice}'")


def chosen_dot_products(choice: str) -> frozenset[str]:
    """The dot products a pass's ``dot-products`` option (:func:`dot_product_choice_problem` accepts it) names."""
    if choice == "host":
        return dot_products()
    return frozenset() if choice == "none" else frozenset(choice.split("+"))


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


#: The environment variable that sets the number of threads compiled code uses.
THREADS_VARIABLE = "GRAPHFUSE_NUM_THREADS"
#: The most threads compiled code may ask for (the OpenMP lowering takes a 32-bit count; past a few thousand the
#: runtimes cannot start them).
MAX_THREADS = 4096


def check_thread_count(threads: object) -> int:
    """``threads`` as the thread count of compiled code, or an error: a positive integer (not a bool) up to
    :data:`MAX_THREADS`."""
    if not isinstance(threads, int) or isinstance(threads, bool) or threads < 1:
        raise GraphfuseError(f"num_threads must be a positive integer, got {threads!r}")
    if threads > MAX_THREADS:
        raise GraphfuseError(f"num_threads must be at most {MAX_THREADS}, got {threads}")
    return threads


def default_threads() -> int:
    """``GRAPHFUSE_NUM_THREADS`` when set (a positive integer), else the cores this process may use."""
    threads = _positive_integer(THREADS_VARIABLE)
    if threads is None:
        return _usable_cpus()
    if threads > MAX_THREADS:
        raise GraphfuseError(f"{THREADS_VARIABLE} must be at most {MAX_THREADS}, got {threads}")
    return threads


def _positive_integer(variable: str) -> int | None:
    """The environment variable ``variable`` as a positive integer; None when unset or blank."""
    text = os.environ.get(variable, "").strip()
    if not text:
        return None
    if not text.isdigit() or int(text) < 1:
        raise GraphfuseError(f"{variable} must be a positive integer, got '{text}'")
    return int(text)


def _usable_cpus() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


#: Environment variable: how many processes generate a large module's code (lowering/split_codegen.py; default:
#: the CPUs this process may use); 1 leaves every module to the ExecutionEngine.
CODEGEN_JOBS_VARIABLE = "GRAPHFUSE_CODEGEN_JOBS"


def codegen_jobs() -> int:
    """``GRAPHFUSE_CODEGEN_JOBS`` when set (a positive integer), else the CPUs this process may use."""
    jobs = _positive_integer(CODEGEN_JOBS_VARIABLE)
    return _usable_cpus() if jobs is None else jobs


#: Environment variable: footprint in bytes from which loop nests use streaming stores, or ``off``.
STREAM_VARIABLE = "GRAPHFUSE_STREAM_MIN_BYTES"
#: The streaming threshold when the OS lists no cache sizes.
_UNKNOWN_CACHE_BYTES = 32 << 20


def stream_min_bytes() -> int | None:
    """The footprint from which loop nests stream their stores (``GRAPHFUSE_STREAM_MIN_BYTES``); None: off."""
    text = os.environ.get(STREAM_VARIABLE, "").strip()
    if not text:
        return last_level_cache_bytes() or _UNKNOWN_CACHE_BYTES
    if text.lower() == "off":
        return None
    if not text.isdigit():
        raise GraphfuseError(f"{STREAM_VARIABLE} must be a number of bytes or 'off', got {text!r}")
    return int(text)
