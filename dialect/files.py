"""Reading the small text files users point graphfuse at (switch files, target descriptions).

A configuration file is a few hundred bytes; a wrong path (a device such as
``/dev/zero``, a log, a directory) must be a one-line error, not a read that
grows without bound or a traceback.  One reader for all of them.
"""

from __future__ import annotations

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
