"""The model zoo bench: every architecture of :mod:`bench.zoo_models` through ``torch.compile`` as users call it.

In the manner of PyTorch's dynamo benchmark suites: per model and dtype, in one process,

- **strict**: ``torch.compile(model, backend=graphfuse)`` with ``fallback="error"`` on a padded batch of 4 and a
  batch of 1 (the library's default arguments: caches on), every floating-point output (logits, hidden states,
  the key/value cache) checked against eager PyTorch; a model passes when nothing ran in eager PyTorch and the
  largest error is at most ``--tolerance`` of the output's largest magnitude (fp32), or (bf16) no worse than
  Inductor's and, against the fp32 model's outputs (its weights before the rounding to bf16, the same inputs),
  no worse than eager bf16's;
- **compile latency**: the first call of a new shape, graphfuse beside Inductor's cold start (its on-disk
  caches disabled; graphfuse's compile cache starts empty: the run keeps it in a directory of its own), in the
  run's process, where only the first model pays Inductor's start-up in a process;
- **cold start in new processes** (``--cold-processes``, the default when both Inductor and graphfuse run): what
  a user who starts a script sees, each variant's first call in a Python process of its own that has built the
  model and nothing else: the time from making the backend (importing graphfuse, for graphfuse) to the first
  outputs, Dynamo's tracing included, Inductor's caches disabled and graphfuse's cache empty; graphfuse's
  compiled path checked as in the strict calls (no eager call, the error within the tolerance);
- **warm start** (``--warm-start``, the default): the strict calls again in a second process sharing that
  cache, as a restarted server or notebook: the backend's compile seconds there (Dynamo's tracing, which every
  backend pays, apart), whether every graph came from the cache and whether the outputs are the cold
  process's bit for bit;
- **time per call** of the batch of 4 for eager, Inductor and graphfuse, interleaved round by round after a pause
  (the best of ``--rounds`` medians);
- **sequence lengths** (decoder LMs that pass): the same compiled model then called with padded batches of 4 at
  ``--lengths`` (a server's prompts): the compiles of the whole run (the first shape static, then the changed dims
  symbolic, as Inductor's automatic dynamic shapes), the calls that ran in eager PyTorch, and the time per call
  at each length, graphfuse's and eager's (the best of 3 calls).

The summary gives pass rates, the geometric-mean speed-ups over eager and Inductor (clipped at 1x below, as
PyTorch's suites report them, and unclipped) and the compile-latency ratio.

    make bench-zoo                                           # writes bench/zoo-latest.md
    python -m bench.zoo --models llama,bert --size tiny --dtypes fp32 --variants eager,graphfuse
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import re
import statistics
import subprocess
import sys
import time
import traceback
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from bench import machine
from bench.cold_cache import private_compile_cache
from bench.run import SETTLE_SECONDS
from bench.zoo_models import SMALL, TINY, ZOO, Size, ZooModel, compared_tensors

VARIANTS = ("eager", "inductor", "graphfuse")
#: timed calls of a variant per round (their median is the round's figure)
CALLS_PER_ROUND = 5
#: the compile-latency goal: graphfuse's cold start at most this share of Inductor's (docs/performance.md)
COLD_SHARE_GOAL = 0.25
#: quiet before each new-process cold start, for the processes of the case before to end
COLD_SETTLE_SECONDS = 2.0
#: sequence lengths of the lengths row (within the zoo's 4 x seq positions at either size's seq)
LENGTHS = "8,17,33,40,47"
SIZES = {"tiny": TINY, "small": SMALL}
DTYPES = ("fp32", "bf16")


@dataclass
class Case:
    """One model in one dtype."""

    model: str
    family: str
    dtype: str
    #: graphfuse strict: "pass", or why not
    status: str = "not run"
    #: largest error against eager over the checked calls, relative to the output's largest magnitude
    error: float | None = None
    inductor_error: float | None = None
    #: bf16: the largest error against the fp32 model's outputs (the same weights before rounding to bf16, the
    #: same inputs), of graphfuse's outputs and of eager's
    f32_error: float | None = None
    eager_f32_error: float | None = None
    #: seconds of the first call (the compiles), graphfuse and Inductor
    compile_s: dict[str, float] = field(default_factory=dict)
    #: graphfuse's own share of its first call: the backend's compile seconds (export, import, graphfuse.compile)
    backend_s: float | None = None
    #: the first call in a new process of its own, per variant (see the module's docstring); a variant whose
    #: process failed is missing and the failure is in ``cold_failure``
    cold_process_s: dict[str, float] = field(default_factory=dict)
    cold_failure: str = ""
    #: the warm start, in a second process: the backend's compile seconds, the first call's, the compiles and
    #: how many came from the cache, and whether the outputs equal the cold process's bit for bit
    warm_backend_s: float | None = None
    warm_first_s: float | None = None
    warm_compiles: int = 0
    warm_from_cache: int = 0
    warm_equal: bool | None = None
    #: a digest of graphfuse's outputs of the strict calls (compared with the warm start's)
    digest: str = ""
    #: median seconds per call of the batch of 4
    call_s: dict[str, float] = field(default_factory=dict)
    graphs: int = 0
    #: sequence lengths: seconds per call of the batch of 4 at each length, graphfuse and eager
    length_s: dict[str, dict[int, float]] = field(default_factory=dict)
    #: graphfuse's compiles over the whole run (strict calls and lengths), the graphs Dynamo gave it (a model
    #: whose Python branches on the length is a new graph at each one, whatever the backend), and its calls in
    #: eager PyTorch
    run_compiles: int = 0
    run_graphs: int = 0
    length_eager_calls: int = 0
    #: largest error against eager over the lengths (as ``error``)
    length_error: float | None = None
    #: why the lengths row failed (a compile, a call or a result at a new length), else empty
    length_failure: str = ""

    @property
    def passed(self) -> bool:
        return self.status == "pass"


def relative_error(got: Any, want: Any) -> float:
    """max |got - want| over every compared tensor, each relative to its eager tensor's largest magnitude; inf
    when the outputs differ in structure, shape, or where graphfuse has NaN/Inf that eager has not."""
    import torch

    got_tensors, want_tensors = list(compared_tensors(got)), list(compared_tensors(want))
    if [path for path, _ in got_tensors] != [path for path, _ in want_tensors]:
        return math.inf
    worst = 0.0
    for (_, g), (_, w) in zip(got_tensors, want_tensors, strict=True):
        if g.shape != w.shape:
            return math.inf
        g, w = g.double(), w.double()
        same_special = (torch.isnan(g) & torch.isnan(w)) | (torch.isinf(w) & (g == w))
        if not torch.equal(torch.isfinite(g) | same_special, torch.ones_like(g, dtype=torch.bool)):
            return math.inf
        finite = torch.isfinite(w)
        if not finite.any():
            continue
        scale = w[finite].abs().max().item() or 1.0
        worst = max(worst, ((g - w).abs()[finite].max().item()) / scale)
    return worst


def _backend(variant: str) -> Any:
    if variant == "inductor":
        return "inductor"
    from graphfuse.frontends.torch_backend import CompilerConfig, get_backend

    return get_backend(compiler_config=CompilerConfig(fallback="error"))


def _call(model: Any, inputs: dict[str, Any]) -> Any:
    import torch

    with torch.no_grad():
        return model(**inputs)


def _first_line(error: BaseException) -> str:
    """The line of an error that says what went wrong, with source paths from the installed packages on."""
    text = f"{type(error).__name__}: {error}".strip()
    lines = text.splitlines()
    # Dynamo wraps a backend's error; the backend's own message is the useful line.
    line = next((line for line in lines if "graphfuse" in line and "error" in line.lower()), lines[0])
    return re.sub(r"\S*/site-packages/", "", line.strip())[:300]


def output_digest(outputs: list[Any]) -> str:
    """A SHA-256 of every compared tensor's bytes, in order."""
    import torch

    digest = hashlib.sha256()
    for output in outputs:
        for path, tensor in compared_tensors(output):
            tensor = tensor.detach().contiguous()
            if tensor.dtype == torch.bfloat16:
                tensor = tensor.view(torch.int16)
            digest.update(path.encode() + tensor.numpy().tobytes())
    return digest.hexdigest()


def run_strict(zoo: ZooModel, model: Any, batches: dict[int, dict[str, Any]], want: dict[int, Any],
               variant: str, outputs: list[Any] | None = None
               ) -> tuple[str, float | None, float, Callable[..., Any] | None]:
    """Compile ``model`` with ``variant`` and check every batch against eager: (status, error, first-call
    seconds, the compiled module or None); the outputs are appended to ``outputs`` when given."""
    import torch

    from graphfuse.frontends import torch_backend

    torch._dynamo.reset()
    torch_backend.clear_reports()
    compiled = torch.compile(model, backend=_backend(variant))
    first = None
    worst = 0.0
    try:
        for batch, inputs in batches.items():
            start = time.perf_counter()
            got = _call(compiled, inputs)
            if first is None:
                first = time.perf_counter() - start
            if outputs is not None:
                outputs.append(got)
            worst = max(worst, relative_error(got, want[batch]))
    except Exception as error:  # a compile or run failure of any kind is the model's result
        return _first_line(error), None, 0.0, None
    if variant == "graphfuse":
        reports = torch_backend.last_report()
        eager = sum(report.eager_calls for report in reports)
        if not reports or eager or not all(report.compiled for report in reports):
            return f"{eager} call(s) ran in eager PyTorch", worst, first or 0.0, compiled
    return "pass", worst, first or 0.0, compiled


def time_calls(callables: dict[str, Callable[..., Any]], inputs: dict[str, Any], rounds: int,
               calls: int = CALLS_PER_ROUND) -> dict[str, float]:
    """Seconds per call of each callable: the best over ``rounds`` of the median of ``calls`` calls, the variants
    interleaved round by round, each after :data:`~bench.run.SETTLE_SECONDS` of quiet (the thread pools of the
    variant before, torch's and graphfuse's OpenMP workers, spin for a while after a call)."""
    best: dict[str, float] = {}
    for _ in range(rounds):
        for name, module in callables.items():
            time.sleep(SETTLE_SECONDS)
            times = []
            for _ in range(calls):
                start = time.perf_counter()
                _call(module, inputs)
                times.append(time.perf_counter() - start)
            best[name] = min(best.get(name, math.inf), statistics.median(times))
    return best


def run_lengths(zoo: ZooModel, size: Size, dtype: str, model: Any, compiled: Any, lengths: list[int],
                case: Case, limit: float) -> None:
    """Call ``compiled`` (graphfuse, after the strict calls) with padded batches of 4 at each of ``lengths``:
    check each result against eager's (an error above ``limit`` fails the row), and record the run's compiles,
    the calls in eager PyTorch, and seconds per call, graphfuse's and eager's."""
    from graphfuse.frontends import torch_backend

    timed: dict[str, dict[int, float]] = {"graphfuse": {}, "eager": {}}
    worst = 0.0
    try:
        for length in lengths:
            inputs = _inputs(zoo, replace(size, seq=length), 4, dtype)
            got = _call(compiled, inputs)  # a compile when the shape is new
            error = relative_error(got, _call(model, inputs))
            worst = max(worst, error)
            if not error <= limit:
                case.length_failure = f"at {length} tokens: error {error:.2e} above {limit:.2e}"
                return
            for name, module in (("graphfuse", compiled), ("eager", model)):
                timed[name][length] = min(_timed_call(module, inputs) for _ in range(3))
    except Exception as error:  # a compile or run failure at a new length is the row's result
        case.length_failure = f"at {length} tokens: {_first_line(error)}"
        return
    case.length_error = worst
    reports = torch_backend.last_report()
    case.length_s = timed
    case.run_compiles = sum(len(report.compiled) for report in reports)
    case.run_graphs = len(reports)
    case.length_eager_calls = sum(report.eager_calls for report in reports)


def _inputs(zoo: ZooModel, size: Size, batch: int, dtype: str) -> dict[str, Any]:
    """The model's inputs for a batch, their floating-point tensors in ``dtype``."""
    import torch

    inputs = zoo.inputs(size, batch)
    if dtype == "bf16":
        inputs = {key: value.to(torch.bfloat16) if value.is_floating_point() else value
                  for key, value in inputs.items()}
    return inputs


def _timed_call(module: Any, inputs: dict[str, Any]) -> float:
    start = time.perf_counter()
    _call(module, inputs)
    return time.perf_counter() - start


def run_case(zoo: ZooModel, size: Size, dtype: str, variants: list[str], rounds: int, tolerance: float,
             lengths: list[int] | None = None, warm_start: bool = False, cold_processes: bool = False) -> Case:
    import torch._inductor.config as inductor_config


    case = Case(zoo.name, zoo.family, dtype)
    model, batches, want, want_f32 = _model_and_batches(zoo, size, dtype)
    if want_f32 is not None:
        case.eager_f32_error = max(relative_error(want[batch], want_f32[batch]) for batch in batches)
    runners: dict[str, Callable[..., Any]] = {"eager": model} if "eager" in variants else {}
    if "inductor" in variants:
        inductor_config.force_disable_caches = True  # a cold start
        status, error, first, compiled = run_strict(zoo, model, batches, want, "inductor")
        inductor_config.force_disable_caches = False
        case.inductor_error = error
        case.compile_s["inductor"] = first
        if compiled is not None:
            runners["inductor"] = compiled
    if "graphfuse" in variants:
        outputs: list[Any] = []
        status, error, first, compiled = run_strict(zoo, model, batches, want, "graphfuse", outputs)
        case.error = error
        case.compile_s["graphfuse"] = first
        case.backend_s = _backend_seconds()
        case.digest = output_digest(outputs) if len(outputs) == len(batches) else ""
        limit = tolerance if dtype == "fp32" else (case.inductor_error if case.inductor_error is not None
                                                   else math.inf)
        if status == "pass" and error is not None:
            if not error <= limit:
                status = f"error {error:.2e} above {limit:.2e}"
        if want_f32 is not None and len(outputs) == len(batches):
            case.f32_error = max(relative_error(got, want_f32[batch])
                                 for got, batch in zip(outputs, batches, strict=True))
            if status == "pass" and not case.f32_error <= case.eager_f32_error:
                status = f"error against fp32 {case.f32_error:.2e} above eager's {case.eager_f32_error:.2e}"
        case.status = status
        if compiled is not None and status == "pass":
            runners["graphfuse"] = compiled
        from graphfuse.frontends import torch_backend

        case.graphs = len(torch_backend.last_report())
    if warm_start and case.passed:
        warm_start_case(case, size)
    if cold_processes and case.passed:
        for variant in ("inductor", "graphfuse"):
            cold_process_case(case, size, variant, tolerance)
    if rounds and len(runners) > 1:
        time_calls(runners, batches[4], 1, calls=1)  # warm every variant once more
        case.call_s = time_calls(runners, batches[4], rounds)
    if lengths and zoo.is_decoder_lm and "graphfuse" in runners:
        run_lengths(zoo, size, dtype, model, runners["graphfuse"], lengths, case, limit)
    return case


def _model_and_batches(zoo: ZooModel, size: Size, dtype: str
                       ) -> tuple[Any, dict[int, dict[str, Any]], dict[int, Any], dict[int, Any] | None]:
    """The model of ``zoo`` in ``dtype``, its padded batches of 4 and 1, eager's outputs on them and, for bf16,
    the fp32 model's (its weights before the rounding to bf16, the batches' floating-point tensors widened)."""
    import torch

    from bench.zoo_models import zoo_model

    model = zoo_model(zoo.name, size)
    batches = {batch: _inputs(zoo, size, batch, dtype) for batch in (4, 1)}
    want_f32 = None
    if dtype == "bf16":
        widened = {batch: {key: value.float() if value.is_floating_point() else value
                           for key, value in inputs.items()} for batch, inputs in batches.items()}
        want_f32 = {batch: _call(model, inputs) for batch, inputs in widened.items()}
        model = model.to(torch.bfloat16)
    return model, batches, {batch: _call(model, inputs) for batch, inputs in batches.items()}, want_f32


def _backend_seconds() -> float:
    """The graphfuse backend's compile seconds over the graphs of the last run (export, import, compile)."""
    from graphfuse.frontends import torch_backend

    return sum(sum(report.compiled.values()) for report in torch_backend.last_report())


def warm_start_case(case: Case, size: Size) -> None:
    """The strict calls of ``case`` again in a second process, with the compile cache the first one filled."""
    command = [sys.executable, "-m", "bench.zoo", "--warm-worker", case.model, "--size", _size_name(size),
               "--dtypes", case.dtype]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    lines = done.stdout.strip().splitlines()
    if done.returncode or not lines:
        case.status = f"warm start failed: {(done.stderr.strip().splitlines() or ['no output'])[-1][:200]}"
        return
    result = json.loads(lines[-1])
    case.warm_backend_s, case.warm_first_s = result["backend_s"], result["first_s"]
    case.warm_compiles, case.warm_from_cache = result["compiles"], result["from_cache"]
    case.warm_equal = bool(case.digest) and result["digest"] == case.digest
    if result["status"] != "pass":
        case.status = f"warm start: {result['status']}"


def warm_worker(name: str, size: Size, dtype: str) -> int:
    """The warm start's second process: the strict calls of one model, reported as one JSON line."""
    import warnings

    from graphfuse.frontends import torch_backend

    warnings.filterwarnings("ignore")
    zoo = ZOO[name]
    model, batches, want, _ = _model_and_batches(zoo, size, dtype)
    outputs: list[Any] = []
    status, _, first, _ = run_strict(zoo, model, batches, want, "graphfuse", outputs)
    reports = torch_backend.last_report()
    print(json.dumps({"status": status, "first_s": first, "backend_s": _backend_seconds(),
                      "compiles": sum(len(report.compiled) for report in reports),
                      "from_cache": sum(report.from_cache for report in reports),
                      "digest": output_digest(outputs)}))
    return 0


def _size_name(size: Size) -> str:
    return next(name for name, known in SIZES.items() if known == size)


def cold_process_case(case: Case, size: Size, variant: str, tolerance: float) -> None:
    """``variant``'s first call of ``case``'s model in a new process (:func:`cold_worker`)."""
    command = [sys.executable, "-m", "bench.zoo", "--cold-worker", case.model, "--cold-variant", variant,
               "--size", _size_name(size), "--dtypes", case.dtype, "--tolerance", repr(tolerance)]
    # The process before (Inductor's compile workers, the warm start) may still be stopping: let it.
    time.sleep(COLD_SETTLE_SECONDS)
    # graphfuse's cache: a new, empty directory for the worker alone (a cold start).
    with private_compile_cache("graphfuse-zoo-cold-"):
        done = subprocess.run(command, capture_output=True, text=True, check=False)
    lines = done.stdout.strip().splitlines()
    if done.returncode or not lines:
        why = (done.stderr.strip().splitlines() or ["no output"])[-1][:200]
        case.cold_failure = f"{variant} in a new process failed: {why}"
        return
    result = json.loads(lines[-1])
    if result["status"] != "pass":
        case.cold_failure = f"{variant} in a new process: {result['status']}"
        return
    case.cold_process_s[variant] = result["first_s"]


def cold_worker(name: str, size: Size, dtype: str, variant: str, tolerance: float) -> int:
    """A cold start in this new process: ``variant``'s first call of the batch of 4, reported as one JSON line.
    The clock starts before the backend is made, so graphfuse's import is counted, as Inductor's (which
    ``torch.compile`` imports at the first call)."""
    import warnings

    import torch
    import torch._inductor.config as inductor_config

    warnings.filterwarnings("ignore")
    inductor_config.force_disable_caches = True
    zoo = ZOO[name]
    model, batches, want, _ = _model_and_batches(zoo, size, dtype)
    start = time.perf_counter()
    compiled = torch.compile(model, backend=_backend(variant))
    try:
        got = _call(compiled, batches[4])
    except Exception as error:  # a compile or run failure of any kind is the result
        print(json.dumps({"status": _first_line(error), "first_s": None}))
        return 0
    first = time.perf_counter() - start
    error = relative_error(got, want[4])
    status = "pass"
    if variant == "graphfuse":
        from graphfuse.frontends import torch_backend

        eager = sum(report.eager_calls for report in torch_backend.last_report())
        if eager:
            status = f"{eager} call(s) ran in eager PyTorch"
    if status == "pass" and dtype == "fp32" and not error <= tolerance:
        status = f"error {error:.2e} above {tolerance:.2e}"
    print(json.dumps({"status": status, "first_s": first, "error": error}))
    return 0


def geomean(values: list[float]) -> float | None:
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else None


def summarize(cases: list[Case]) -> list[str]:
    lines = []
    for dtype in DTYPES:
        of_dtype = [c for c in cases if c.dtype == dtype]
        if not of_dtype:
            continue
        passed = [c for c in of_dtype if c.passed]
        lines.append(f"- {dtype}: {len(passed)} of {len(of_dtype)} pass strict")
        for peer in ("eager", "inductor"):
            ratios = [c.call_s[peer] / c.call_s["graphfuse"] for c in passed
                      if peer in c.call_s and "graphfuse" in c.call_s]
            if ratios:
                clipped = geomean([max(r, 1.0) for r in ratios])
                lines.append(f"  - speed-up over {peer}: geometric mean {geomean(ratios):.2f}x unclipped, "
                             f"{clipped:.2f}x clipped at 1x, lowest {min(ratios):.2f}x, over {len(ratios)} models")
        latency = [c.compile_s["inductor"] / c.compile_s["graphfuse"] for c in passed
                   if c.compile_s.get("inductor") and c.compile_s.get("graphfuse")]
        if latency:
            lines.append(f"  - compile latency in the run's process, Inductor cold start over graphfuse: geometric "
                         f"mean {geomean(latency):.2f}x, lowest {min(latency):.2f}x")
        cold = [c for c in passed if {"inductor", "graphfuse"} <= c.cold_process_s.keys()]
        if cold:
            shares = {c.model: c.cold_process_s["graphfuse"] / c.cold_process_s["inductor"] for c in cold}
            worst = max(shares, key=shares.__getitem__)
            lines.append(f"  - cold start in new processes, graphfuse's first call over Inductor's: geometric mean "
                         f"{geomean(list(shares.values())):.2f}, largest {shares[worst]:.2f} ({worst}), at most "
                         f"{COLD_SHARE_GOAL} in {sum(v <= COLD_SHARE_GOAL for v in shares.values())} of {len(cold)}")
        failed = [c for c in passed if c.cold_failure]
        if failed:
            lines.append(f"  - cold start in new processes failed for {len(failed)}: "
                         + "; ".join(f"{c.model}: {c.cold_failure}" for c in failed))
        warm = [c for c in of_dtype if c.warm_backend_s is not None]
        if warm:
            slowest = max(warm, key=lambda c: c.warm_backend_s)
            whole = sum(c.warm_from_cache == c.warm_compiles > 0 for c in warm)
            lines.append(f"  - warm start (a second process): backend compile at most {slowest.warm_backend_s:.3f} s "
                         f"({slowest.model}), median {statistics.median(c.warm_backend_s for c in warm):.3f} s; "
                         f"every graph from the cache in {whole} of {len(warm)}; outputs bit for bit the cold "
                         f"process's in {sum(bool(c.warm_equal) for c in warm)} of {len(warm)}")
    return lines


def table(cases: list[Case]) -> list[str]:
    head = ["model", "family", "dtype", "graphfuse strict", "error", "Inductor error", "vs fp32 (gf / eager)",
            "compile s (gf / ind)",
            "backend s", "new process s (gf / ind)", "warm s (backend / first call)", "eager ms", "Inductor ms",
            "graphfuse ms", "vs eager", "vs Inductor"]
    rows = []
    for c in cases:
        def ms(variant: str, case: Case = c) -> str:
            return f"{case.call_s[variant] * 1e3:.2f}" if variant in case.call_s else "-"

        def ratio(peer: str, case: Case = c) -> str:
            if peer in case.call_s and "graphfuse" in case.call_s:
                return f"{case.call_s[peer] / case.call_s['graphfuse']:.2f}x"
            return "-"

        def err(value: float | None) -> str:
            return "-" if value is None else f"{value:.1e}"

        compile_text = " / ".join(f"{c.compile_s[v]:.1f}" if c.compile_s.get(v) else "-"
                                  for v in ("graphfuse", "inductor"))
        backend = "-" if c.backend_s is None else f"{c.backend_s:.2f}"
        cold = " / ".join(f"{c.cold_process_s[v]:.1f}" if v in c.cold_process_s else "-"
                          for v in ("graphfuse", "inductor"))
        warm = "-"
        if c.warm_backend_s is not None:
            warm = f"{c.warm_backend_s:.3f} / {c.warm_first_s:.2f}" + ("" if c.warm_equal else " (outputs differ)")
        status = c.status.replace("|", "\\|")
        against_f32 = "-" if c.f32_error is None else f"{err(c.f32_error)} / {err(c.eager_f32_error)}"
        rows.append([c.model, c.family, c.dtype, status, err(c.error), err(c.inductor_error), against_f32,
                     compile_text,
                     backend, cold, warm, ms("eager"), ms("inductor"), ms("graphfuse"), ratio("eager"),
                     ratio("inductor")])
    return ["| " + " | ".join(head) + " |", "|" + "---|" * len(head), *("| " + " | ".join(r) + " |" for r in rows)]


def lengths_table(cases: list[Case]) -> list[str]:
    """The lengths row of each decoder LM that ran it: compiles, Dynamo's graphs (more compiles than graphs: a
    graph compiled per shape), eager calls, the largest error, ms per call at each length."""
    measured = [c for c in cases if c.length_s.get("graphfuse")]
    failed = [c for c in cases if c.length_failure]
    if not measured and not failed:
        return []
    lengths = sorted(measured[0].length_s["graphfuse"]) if measured else []
    head = ["model", "dtype", "compiles (run)", "Dynamo graphs", "eager calls", "error",
            *(f"{length} tokens: graphfuse / eager ms" for length in lengths)]
    rows = [[c.model, c.dtype, str(c.run_compiles), str(c.run_graphs), str(c.length_eager_calls),
             f"{c.length_error:.1e}",
             *(f"{c.length_s['graphfuse'][n] * 1e3:.2f} / {c.length_s['eager'][n] * 1e3:.2f}" for n in lengths)]
            for c in measured]
    rows += [[c.model, c.dtype, "failed " + c.length_failure.replace("|", "\\|"), "-", "-", "-",
              *("-" for _ in lengths)]
             for c in failed]
    return ["| " + " | ".join(head) + " |", "|" + "---|" * len(head), *("| " + " | ".join(r) + " |" for r in rows)]


def _run_cases(names: list[str], dtypes: list[str], size: Size, variants: list[str], args: argparse.Namespace,
               lengths: list[int]) -> list[Case]:
    cases = []
    for name in names:
        zoo = ZOO[name]
        for dtype in dtypes:
            if dtype == "bf16" and not zoo.is_decoder_lm:
                continue
            start = time.perf_counter()
            try:
                case = run_case(zoo, size, dtype, variants, args.rounds, args.tolerance, lengths,
                                args.warm_start and "graphfuse" in variants,
                                args.cold_processes and {"inductor", "graphfuse"} <= set(variants))
            except Exception as error:  # building the model or its eager run: the zoo's own problem
                traceback.print_exc()
                case = Case(zoo.name, zoo.family, dtype, status=f"eager: {_first_line(error)}")
            cases.append(case)
            print(f"{name} {dtype}: {case.status} (error {case.error}) in {time.perf_counter() - start:.0f} s",
                  file=sys.stderr, flush=True)
    return cases


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default="all", help="comma-separated names of bench/zoo_models.py, or all")
    parser.add_argument("--size", choices=sorted(SIZES), default="small")
    parser.add_argument("--dtypes", default="fp32,bf16", help="fp32, bf16 (bf16 runs the decoder LMs)")
    parser.add_argument("--variants", default=",".join(VARIANTS), help=f"comma-separated, of {', '.join(VARIANTS)}")
    parser.add_argument("--rounds", type=int, default=5,
                        help=f"timed rounds of {CALLS_PER_ROUND} calls per variant (0: no timing)")
    parser.add_argument("--tolerance", type=float, default=1e-4, help="fp32 error limit, relative")
    parser.add_argument("--markdown", type=Path, help="also write the table to this file")
    parser.add_argument("--json", type=Path, help="also write every case as JSON")
    parser.add_argument("--lengths", default=LENGTHS,
                        help="sequence lengths of the decoder LMs' lengths row, comma-separated; empty: none")
    parser.add_argument("--warm-start", action=argparse.BooleanOptionalAction, default=True,
                        help="run the strict calls again in a second process sharing the compile cache")
    parser.add_argument("--cold-processes", action=argparse.BooleanOptionalAction, default=True,
                        help="time each variant's first call again in a new process of its own (with both "
                             "inductor and graphfuse in --variants)")
    parser.add_argument("--warm-worker", metavar="MODEL", help=argparse.SUPPRESS)
    parser.add_argument("--cold-worker", metavar="MODEL", help=argparse.SUPPRESS)
    parser.add_argument("--cold-variant", choices=("inductor", "graphfuse"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.warm_worker is not None:
        return warm_worker(args.warm_worker, SIZES[args.size], args.dtypes)
    if args.cold_worker is not None:
        return cold_worker(args.cold_worker, SIZES[args.size], args.dtypes, args.cold_variant, args.tolerance)
    names = list(ZOO) if args.models == "all" else [n.strip() for n in args.models.split(",") if n.strip()]
    dtypes = [d.strip() for d in args.dtypes.split(",") if d.strip()]
    variants = [v.strip() for v in args.variants.split(",") if v.strip()]
    problems = [f"unknown model {n!r}" for n in names if n not in ZOO]
    problems += [f"unknown dtype {d!r}" for d in dtypes if d not in DTYPES]
    problems += [f"unknown variant {v!r}" for v in variants if v not in VARIANTS]
    try:
        lengths = [int(n) for n in args.lengths.split(",") if n.strip()]
    except ValueError:
        lengths = []
        problems.append(f"--lengths must be whole numbers separated by commas, got {args.lengths!r}")
    problems += [f"length {n} is not in 2..{4 * SIZES[args.size].seq}" for n in lengths
                 if not 2 <= n <= 4 * SIZES[args.size].seq]
    if problems:
        print(f"bench.zoo: error: {'; '.join(problems)}", file=sys.stderr)
        return 1
    try:
        import torch
        import transformers  # noqa: F401
    except ImportError:
        print("bench.zoo: error: needs the torch and models extras (pip install -e '.[torch,models]')",
              file=sys.stderr)
        return 1
    import warnings

    warnings.filterwarnings("ignore")
    torch._dynamo.config.cache_size_limit = 64
    torch._dynamo.config.accumulated_cache_size_limit = max(512, torch._dynamo.config.accumulated_cache_size_limit)
    size = SIZES[args.size]
    # graphfuse's compile cache starts empty (a cold start, as Inductor's); the warm starts share it.
    with private_compile_cache("graphfuse-zoo-cache-"):
        cases = _run_cases(names, dtypes, size, variants, args, lengths)
    cpu, flags = machine.cpu_info()
    lines = [f"date {machine.today()}, commit {machine.commit()}",
             f"CPU: {cpu} (flags: {', '.join(flags) or 'none of avx512f/avx2/fma'}), torch {torch.__version__}, "
             f"{torch.get_num_threads()} torch threads; size {args.size} ({size}); time per call of the padded "
             f"batch of 4: best of {args.rounds} interleaved rounds of the median of {CALLS_PER_ROUND} calls", "",
             *table(cases), "", *summarize(cases)]
    if lengths_table(cases):
        lines += ["", f"Sequence lengths: the decoder LMs' compiled model called next with padded batches of 4 at "
                      f"{', '.join(map(str, lengths))} tokens (the best of 3 calls each); compiles over the whole "
                      f"run, strict calls included", "", *lengths_table(cases)]
    print("\n".join(lines))
    if args.markdown:
        args.markdown.write_text("# Model zoo\n\n" + "\n".join(lines) + "\n")
    if args.json:
        args.json.write_text(json.dumps([asdict(c) for c in cases], indent=1))
    return 0 if all(c.passed for c in cases) else 1


if __name__ == "__main__":
    sys.exit(main())
