"""The files graphfuse reads and writes for its users.

Reading: a configuration file (switch files, target descriptions) is a few
hundred bytes; a wrong path (a device such as ``/dev/zero``, a log, a
directory) must be a one-line error, not a read that grows without bound or a
traceback.  One reader for all of them.

Writing: an output is written whole or not at all.  Every file the tools and
the API write goes to a temporary file in the target's directory and is
renamed over the target only once complete (:func:`atomic_output`), so a full
disk, a file-size limit or a failing compiler leaves the previous file as it
was; and an output that is also an input, or two outputs that are one file,
are refused before anything is written (:func:`check_distinct_files`).
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import sys
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import BinaryIO

from graphfuse.dialect.diagnostics import GraphfuseError


def read_config_text(path: str, what: str, max_bytes: int, expected: str, shown: str | None = None) -> str:
    """The text of file ``path`` (UTF-8, a byte order mark skipped, universal newlines).

    ``what`` names the file in errors ("fusion switch file") and ``expected``
    says what it should hold; ``shown`` is the path as the user gave it
    (default ``path``).  At most ``max_bytes + 1`` bytes are read: a larger
    file is an error.
    """
    shown = path if shown is None else shown
    try:
        with open(path, "rb") as stream:
            data = stream.read(max_bytes + 1)
    except FileNotFoundError:
        raise GraphfuseError(f"could not open {what} '{shown}': no such file or directory") from None
    except IsADirectoryError:
        raise GraphfuseError(f"could not read {what} '{shown}': it is a directory") from None
    except OSError as error:
        raise GraphfuseError(f"could not read {what} '{shown}': {error.strerror or error}") from None
    if len(data) > max_bytes:
        raise GraphfuseError(f"{what} '{shown}' is larger than {max_bytes >> 20} MiB ({expected})")
    try:
        text = data.decode("utf-8-sig")  # editors on Windows start UTF-8 files with a byte order mark
    except UnicodeDecodeError as error:
        raise GraphfuseError(f"could not read {what} '{shown}': {error}") from None
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _writes_in_place(path: Path) -> bool:
    """Whether ``path`` names something other than a regular file (a device such as /dev/null, a FIFO):
    renaming over it would replace the device node, so it is written directly."""
    try:
        return not stat.S_ISREG(os.stat(path).st_mode)
    except OSError:
        return False  # missing (a new file), or unreadable: the write reports it


def _new_file_mode(path: Path) -> int:
    """The permissions a plain ``open(path, "w")`` would give: the existing file's, else 0666 less the umask."""
    try:
        return stat.S_IMODE(os.stat(path).st_mode)
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


def _write_error(what: str, path: str | Path, error: OSError) -> GraphfuseError:
    if isinstance(error, IsADirectoryError) or Path(path).is_dir():
        return GraphfuseError(f"could not write {what} '{path}': it is a directory")
    return GraphfuseError(f"could not write {what} '{path}': {error.strerror or error}")


@contextlib.contextmanager
def atomic_output(path: str | Path, what: str = "output file") -> Iterator[Path]:
    """A path to write ``path``'s new contents to, renamed over ``path`` when the block ends without an error.

    The temporary file is in ``path``'s directory (a rename never crosses file systems) and is removed when
    the block raises; ``path`` then keeps its old contents.  A ``path`` that is a device or a FIFO is yielded
    as it is.  An OSError of the block or the rename becomes a GraphfuseError naming ``what`` and ``path``.
    """
    target = Path(path)
    if target.is_dir():
        raise GraphfuseError(f"could not write {what} '{path}': it is a directory")
    if _writes_in_place(target):
        try:
            yield target
        except OSError as error:
            raise _write_error(what, path, error) from None
        return
    try:
        handle, temporary = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent or ".")
    except OSError as error:
        raise _write_error(what, path, error) from None
    os.close(handle)
    scratch = Path(temporary)
    try:
        yield scratch
        os.chmod(scratch, _new_file_mode(target))
        os.replace(scratch, target)
    except OSError as error:
        scratch.unlink(missing_ok=True)
        raise _write_error(what, path, error) from None
    except BaseException:
        scratch.unlink(missing_ok=True)
        raise


def sync_to_disk(stream: BinaryIO) -> None:
    """Flush ``stream`` to the device: a full disk can first show here.  Devices and pipes that cannot be
    synced (/dev/null) are fine as they are."""
    stream.flush()
    try:
        os.fsync(stream.fileno())
    except OSError as error:
        if error.errno not in (errno.EINVAL, errno.ENOTSUP):
            raise


def write_synced(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` (an :func:`atomic_output` path, which reports the errors) and sync it."""
    with open(path, "wb") as stream:
        stream.write(data)
        sync_to_disk(stream)


def write_file(path: str | Path, data: str | bytes, what: str = "output file") -> None:
    """Write ``data`` (text as UTF-8) to ``path`` whole or not at all (see :func:`atomic_output`)."""
    with atomic_output(path, what) as scratch:
        write_synced(scratch, data.encode() if isinstance(data, str) else data)


def write_output(path: str | Path, data: str | bytes, what: str = "output file") -> None:
    """Write ``data`` to standard output when ``path`` is ``-`` (text or binary, as mlir-opt writes either),
    else to the file (see :func:`write_file`)."""
    if str(path) != "-":
        write_file(path, data, what)
        return
    sys.stdout.flush()  # after what the tool printed before
    sys.stdout.buffer.write(data.encode() if isinstance(data, str) else data)
    sys.stdout.buffer.flush()


def _identity(path: Path) -> tuple[int, int] | None:
    try:
        info = os.stat(path)
    except OSError:
        return None
    return info.st_dev, info.st_ino


def check_distinct_files(inputs: Iterable[tuple[str, str | Path]], outputs: Iterable[tuple[str, str | Path]]
                         ) -> None:
    """Refuse an output that is one of the inputs, or one file named by two outputs.

    Each entry is (what, path), e.g. ("input file", "a.mlir"); ``-`` (standard input or output) and devices
    are never the same file as anything.  Paths are compared as files (links and ``./`` spellings included)
    where they exist, else by their resolved names.
    """
    def key(path: str | Path) -> object | None:
        if str(path) == "-" or _writes_in_place(Path(path)):
            return None
        identity = _identity(Path(path))
        return identity if identity is not None else os.path.realpath(path)

    seen: dict[object, tuple[str, str | Path]] = {}
    for what, path in inputs:
        k = key(path)
        if k is not None:
            seen.setdefault(k, (what, path))
    for what, path in outputs:
        k = key(path)
        if k is None:
            continue
        if k in seen:
            other_what, other_path = seen[k]
            raise GraphfuseError(f"{what} '{path}' is the same file as the {other_what} '{other_path}': "
                                 f"refusing to overwrite it")
        seen[k] = (what, path)
