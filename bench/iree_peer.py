"""The IREE peer of `make bench`, run by bench/run.py as a child process under the peers venv (.venv-peers).

    .venv-peers/bin/python -m bench.iree_peer

IREE is no dependency of graphfuse, so it lives in its own venv and process.
The parent sends one JSON request per line on stdin and reads one JSON reply
per line on stdout:

    {"cmd": "load", "program": "w.pt2", "inputs": ["a.npy", ...]}  -> compile + upload the inputs
    {"cmd": "output", "directory": D}                               -> one call, outputs saved as D/out<i>.npy
    {"cmd": "time", "calls": N}                                     -> {"times": [s, ...]} (evicting first)
    {"cmd": "quit"}

The program is a torch.export ExportedProgram saved by the parent (same torch
version in both venvs); here it goes run_decompositions -> the FX importer
bundled with iree-base-compiler -> iree-compile (llvm-cpu, host CPU, O3, data
tiling) -> iree.runtime with the local-task driver on ``THREADS`` workers.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from typing import Any

import numpy as np

from bench.machine import THREADS, Evictor, load_stream_lib, reuse_freed_memory

IREE_FLAGS = [
    "--iree-input-type=torch",
    "--iree-hal-target-device=local",
    "--iree-hal-local-target-device-backends=llvm-cpu",
    "--iree-llvmcpu-target-cpu=host",
    "--iree-opt-level=O3",
    "--iree-opt-data-tiling",
]


class Peer:
    def __init__(self, workdir: str, evict: Evictor):
        import iree.runtime as rt

        self.rt = rt
        self.workdir = workdir
        self.evict = evict
        rt.flags.parse_flags(f"--task_topology_max_group_count={THREADS}")
        self.config = rt.Config("local-task")
        self.call: Any = None

    def load(self, program: str, inputs: list[str]) -> dict[str, Any]:
        import torch
        from iree.compiler.extras.fx_importer import FxImporter
        from iree.compiler.tools import binaries

        start = time.perf_counter()
        exported = torch.export.load(program).run_decompositions()
        importer = FxImporter()
        importer.import_frozen_program(exported, func_name="main")
        source = os.path.join(self.workdir, "program.torch.mlir")
        with open(source, "w") as f:
            f.write(str(importer.module))
        vmfb = os.path.join(self.workdir, "program.vmfb")
        done = subprocess.run(
            [binaries.find_tool("iree-compile"), *IREE_FLAGS, source, "-o", vmfb], capture_output=True, text=True
        )
        if done.returncode != 0:
            raise RuntimeError(f"iree-compile failed: {done.stderr.strip()[-400:]}")
        context = self.rt.SystemContext(config=self.config)
        with open(vmfb, "rb") as f:
            context.add_vm_module(self.rt.VmModule.copy_buffer(context.instance, f.read()))
        main = context.modules.module["main"]
        arrays = [self.rt.asdevicearray(self.config.device, np.load(p)) for p in inputs]
        self.call = lambda: main(*arrays)
        return {"compile_s": time.perf_counter() - start}

    def output(self, directory: str) -> dict[str, Any]:
        result = self.call()
        results = result if isinstance(result, (list, tuple)) else [result]
        for i, r in enumerate(results):
            np.save(os.path.join(directory, f"out{i}.npy"), np.asarray(r.to_host()))
        return {"outputs": len(results)}

    def time(self, calls: int) -> dict[str, Any]:
        times = []
        for _ in range(calls):
            self.evict()
            start = time.perf_counter()
            result = self.call()
            times.append(time.perf_counter() - start)
            del result
        return {"times": times}


def main() -> int:
    # Replies go to the real stdout; anything IREE or torch prints goes to stderr.
    replies = os.fdopen(os.dup(sys.stdout.fileno()), "w", buffering=1)
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    if os.environ.get("BENCH_REUSE_MEMORY") == "1":
        reuse_freed_memory()
    lib_path = os.environ.get("BENCH_STREAM_LIB")
    evict = Evictor(os.environ.get("BENCH_EVICT", "1") == "1", int(os.environ["BENCH_EVICT_BYTES"]),
                    load_stream_lib(lib_path) if lib_path else None)
    with tempfile.TemporaryDirectory(prefix="bench_iree_") as workdir:
        peer = Peer(workdir, evict)
        for line in sys.stdin:
            request = json.loads(line)
            cmd = request.pop("cmd")
            if cmd == "quit":
                break
            try:
                reply = getattr(peer, cmd)(**request)
            except Exception as e:  # reported to the parent, which prints it in the table
                reply = {"error": f"{type(e).__name__}: {e}"[:600]}
            replies.write(json.dumps(reply) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
