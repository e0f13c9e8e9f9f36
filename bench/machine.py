"""The machine's side of `make bench`: what CPU it is, its bandwidth and matmul limits, cache eviction.

Imports numpy only (no graphfuse): the IREE peer process (bench/iree_peer.py,
in the peers venv) evicts the caches with the same code.
"""

from __future__ import annotations

import ctypes
import datetime
import math
import os
import shutil
import statistics
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
THREADS = 2
MIN_EVICT_BYTES = 256 << 20
FLAGS_OF_INTEREST = ("avx512f", "avx2", "fma")
_FLOAT_P = ctypes.POINTER(ctypes.c_float)


def cpu_info() -> tuple[str, list[str]]:
    """The CPU model as /proc/cpuinfo reports it, with its family and model numbers, and which of
    avx512f/avx2/fma it lists.

    The numbers tell microarchitectures apart that share a marketing name (a virtual machine's "AMD EPYC" is
    Zen 4 at family 25 and Zen 5 at family 26; the first runs 512-bit FMAs at half the rate of the second), and
    ratios against libraries that pick their code path by vendor depend on it.
    """
    from graphfuse.lowering.host import cpuinfo

    fields = cpuinfo()
    flags = set(fields.get("flags", "").split())
    model = fields.get("model name", "unknown")
    if "cpu family" in fields and "model" in fields:
        model += f" (family {fields['cpu family']} model {fields['model']})"
    return model, [f for f in FLAGS_OF_INTEREST if f in flags]


def commit() -> str:
    try:
        out = subprocess.run(
            ["git", "describe", "--always", "--dirty"], cwd=HERE, capture_output=True, text=True, check=True
        )
        return out.stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def today() -> str:
    return datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")


def reuse_freed_memory() -> None:
    """Let glibc keep freed large blocks (as MALLOC_MMAP_MAX_=0 etc. would): peers that allocate
    their output per call then reuse it instead of paying page faults and kernel zeroing each call."""
    try:
        libc = ctypes.CDLL("libc.so.6")
    except OSError:
        return
    m_trim_threshold, m_top_pad, m_mmap_max = -1, -2, -4
    libc.mallopt(m_mmap_max, 0)
    libc.mallopt(m_trim_threshold, 2**31 - 1)
    libc.mallopt(m_top_pad, 512 << 20)


def aligned_empty(n: int, align: int = 64) -> np.ndarray:
    raw = np.empty(n + align // 4, np.float32)
    offset = (-raw.ctypes.data % align) // 4
    return raw[offset : offset + n]


def build_stream_lib(directory: str) -> tuple[ctypes.CDLL | None, str]:
    """Compile bench/stream.c and the peak loops of bench/peaks.c into ``directory``; (None, why) when gcc is
    missing or fails."""
    gcc = shutil.which("gcc")
    if gcc is None:
        return None, "gcc not found"
    target = os.path.join(directory, "libbenchstream.so")
    cmd = [gcc, "-O3", "-march=native", "-shared", "-fPIC", str(HERE / "stream.c"), str(HERE / "peaks.c"), "-o", target]
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        return None, f"gcc failed: {done.stderr.strip()[:200]}"
    return load_stream_lib(target), "gcc -O3 -march=native"


def load_stream_lib(path: str) -> ctypes.CDLL:
    lib = ctypes.CDLL(path)
    lib.triad_stream.argtypes = [_FLOAT_P, _FLOAT_P, _FLOAT_P, ctypes.c_float, ctypes.c_long]
    lib.read_lines.argtypes = [_FLOAT_P, ctypes.c_long]
    lib.read_lines.restype = ctypes.c_float
    for loop in PEAK_LOOPS.values():
        if hasattr(lib, loop.symbol):
            getattr(lib, loop.symbol).argtypes = [ctypes.c_long]
    return lib


def _ptr(a: np.ndarray) -> ctypes._Pointer:
    return a.ctypes.data_as(_FLOAT_P)


def _in_threads(parts: list[Callable[[], object]]) -> None:
    if len(parts) == 1:
        parts[0]()
        return
    threads = [threading.Thread(target=p) for p in parts]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


def _slices(n: int, threads: int) -> list[tuple[int, int]]:
    return [(i * n // threads, (i + 1) * n // threads) for i in range(threads)]


def evict_bytes(last_level_cache: int) -> int:
    """Bytes to read before a timed call so that none of its data is cached: twice the LLC, at least 256 MiB."""
    return max(MIN_EVICT_BYTES, 2 * last_level_cache)


class Evictor:
    """Evict the caches before a timed call: ``THREADS`` threads read ``nbytes`` (twice the LLC, at least
    256 MiB: :func:`evict_bytes`), read only so no dirty lines are left to write back.

    The size is an argument because the IREE child runs in the peers venv, which has no graphfuse to read
    the cache size from: the parent passes its figure on.
    """

    def __init__(self, enabled: bool, nbytes: int, lib: ctypes.CDLL | None = None):
        self.enabled = enabled
        self.nbytes = nbytes
        self.buffer = aligned_empty(self.nbytes // 4) if enabled else None
        self.parts: list[Callable[[], object]] = []
        if self.buffer is None:
            return
        self.buffer[:] = 1.0
        for lo, hi in _slices(self.buffer.size, THREADS):
            chunk = self.buffer[lo:hi]
            if lib is not None:
                self.parts.append(lambda c=chunk: lib.read_lines(_ptr(c), c.size))
            else:  # numpy's reductions drop the GIL too
                self.parts.append(lambda c=chunk: c.sum())

    def __call__(self) -> None:
        if self.enabled:
            _in_threads(self.parts)


@dataclass(frozen=True)
class PeakLoop:
    """A loop of bench/peaks.c: its symbol, the CPU flag its instruction needs, the operations per instruction."""

    symbol: str
    flag: str
    ops_per_instruction: int


#: The arithmetic peaks measured, by the element type of the products: f32 FMAs (vfmadd231ps), bf16 pair dot
#: products (vdpbf16ps), int8 dot products of fours (vpdpbusd); each 512 bits wide.
PEAK_LOOPS = {
    "f32": PeakLoop("peak_f32_fma", "avx512f", 32),
    "bf16": PeakLoop("peak_bf16_dot", "avx512_bf16", 64),
    "int8": PeakLoop("peak_int8_dot", "avx512_vnni", 128),
}
#: Iterations of a peak loop per timed call (12 instructions each): about 0.1 s at 3 GHz.
PEAK_ITERATIONS = 25_000_000
#: Seconds before each timed peak loop: the thread pools of the call before (OpenBLAS behind numpy's matmul, an
#: OpenMP runtime) keep spinning on the cores a while, and a loop timed among them ran at half its rate.
PEAK_SETTLE_SECONDS = 0.3


def measure_peaks(lib: ctypes.CDLL | None, threads: int = THREADS, rounds: int = 3) -> dict[str, float]:
    """G operations per second of each peak loop the CPU can run, on ``threads`` threads at once (the best of
    ``rounds``); an empty dict without the library."""
    if lib is None:
        return {}
    flags = set(_cpu_flags())
    peaks: dict[str, float] = {}
    for kind, loop in PEAK_LOOPS.items():
        if loop.flag not in flags or "avx512f" not in flags or not hasattr(lib, loop.symbol):
            continue
        run = getattr(lib, loop.symbol)
        parts = [lambda run=run: run(PEAK_ITERATIONS) for _ in range(threads)]
        best = math.inf
        for _ in range(rounds):
            time.sleep(PEAK_SETTLE_SECONDS)
            best = min(best, _timed(lambda parts=parts: _in_threads(parts)))
        ops = threads * PEAK_ITERATIONS * lib.peak_instructions_per_iteration() * loop.ops_per_instruction
        peaks[kind] = ops / best / 1e9
    return peaks


def _cpu_flags() -> list[str]:
    from graphfuse.lowering.host import cpuinfo

    return cpuinfo().get("flags", "").split()


def _timed(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


@dataclass
class Limits:
    #: GB/s of the streaming-store triad (or numpy's fallback figure) by thread count
    bandwidth: dict[int, float] = field(default_factory=dict)
    bandwidth_method: str = ""
    matmul_gflops: float = 0.0
    #: G operations per second of the peak loops on THREADS threads, by element type (:data:`PEAK_LOOPS`)
    peaks: dict[str, float] = field(default_factory=dict)

    @property
    def bw_ratio(self) -> float:
        return self.bandwidth[2] / self.bandwidth[1] if self.bandwidth.get(1) else 0.0


def _best(fn: Callable[[], object], reps: int) -> float:
    fn()
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


class Triad:
    """The streaming-store triad a = b + 3c over ``array_mib`` MiB arrays, runnable on 1 and 2 threads.

    Kept for the whole run: besides the figure at the start (:func:`measure_limits`), every workload
    times it in its own interleaved rounds, so its "% stream bw" and thread scaling compare with what the
    memory gave at that moment (a shared machine's bandwidth drifts by 20% over minutes).
    """

    def __init__(self, lib: ctypes.CDLL | None, why_no_lib: str, array_mib: int = 256):
        n = array_mib * (1 << 20) // 4
        self.bytes = 3 * n * 4  # each array's bytes counted once
        self.a, self.b, self.c = aligned_empty(n), aligned_empty(n), aligned_empty(n)
        self.a[:], self.b[:], self.c[:] = 0.0, 1.0, 2.0
        self.runs: dict[int, Callable[[], object]] = {}
        for threads in (1, 2):
            parts: list[Callable[[], object]] = []
            for lo, hi in _slices(n, threads):
                if lib is not None:
                    args = (_ptr(self.a[lo:]), _ptr(self.b[lo:]), _ptr(self.c[lo:]), 3.0, hi - lo)
                    parts.append(lambda args=args: lib.triad_stream(*args))
                else:
                    parts.append(self._numpy_part(lo, hi))
            self.runs[threads] = lambda parts=parts: _in_threads(parts)
        self.method = (
            "streaming-store triad in C (" + why_no_lib + ")"
            if lib is not None
            else f"numpy triad with regular stores ({why_no_lib}; lower than a streaming-store figure)"
        )

    def _numpy_part(self, lo: int, hi: int) -> Callable[[], object]:
        tmp = np.empty(hi - lo, np.float32)
        dst, x, y = self.a[lo:hi], self.b[lo:hi], self.c[lo:hi]

        def part() -> None:
            np.multiply(y, np.float32(3.0), out=tmp)
            np.add(x, tmp, out=dst)

        return part

    def gbs(self, seconds: float) -> float:
        return self.bytes / seconds / 1e9


def measure_limits(triad: Triad, reps: int = 5, rounds: int = 3, lib: ctypes.CDLL | None = None) -> Limits:
    """The triad on 1 and 2 threads, numpy's fp32 2048^3 matmul (OpenBLAS, its default threads) and, with the
    library, the peak loops (:func:`measure_peaks`).

    The triad is timed as the workloads are: the median of ``reps`` calls, the best of ``rounds`` rounds,
    the 1- and 2-thread runs interleaved (a single median moved by 25% between runs on a shared machine)."""
    limits = Limits()
    for _ in range(rounds):
        for threads, run in triad.runs.items():
            limits.bandwidth[threads] = max(limits.bandwidth.get(threads, 0.0), triad.gbs(_best(run, reps)))
    limits.bandwidth_method = triad.method
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal((2048, 2048), dtype=np.float32), rng.standard_normal((2048, 2048), dtype=np.float32)
    limits.matmul_gflops = 2 * 2048**3 / _best(lambda: x @ y, 3) / 1e9
    limits.peaks = measure_peaks(lib)
    return limits
