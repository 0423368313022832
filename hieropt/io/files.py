"""Atomic output files: every file hieropt writes (JSON, CSV, Parquet, instance files, bundle files,
plots, HTML) is written beside its final path, flushed to the disk (fsync) and renamed over it, so a
run that fails on the way (a full disk, an interrupt) never leaves a partial file in place of a
complete earlier one.

The one mechanism is :func:`replacing`, a context manager that yields the temporary path to write
to; :func:`write_atomic` writes text or bytes through it. A failure raises :class:`OutputError` (an
``OSError``), whose message names the file and says that the earlier file, if any, is intact.

Within a :func:`recording_writes` block every file :func:`replacing` completes is recorded
(:func:`written`): the command line's record of which output files hold this run's answer, and so
which ones an end without an answer must not leave holding an earlier run's
(:mod:`hieropt.cli.outputs`).
"""

from __future__ import annotations

import errno as errnos
import math
import os
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path

__all__ = [
    "OutputError",
    "any_written",
    "json_text",
    "nonfinite_field",
    "output_problem",
    "record_written",
    "recording_writes",
    "replacing",
    "write_atomic",
    "written",
]

_WRITES: ContextVar[set[str] | None] = ContextVar("hieropt_files_written", default=None)
"""The record of the innermost :func:`recording_writes` block (None outside one: a library caller
records nothing)."""


@contextmanager
def recording_writes() -> Iterator[None]:
    """Within the block, every output :func:`replacing` completes is recorded (real paths), and
    so is each one given to :func:`record_written`; :func:`written` asks. Blocks nest; each starts
    empty."""
    token = _WRITES.set(set())
    try:
        yield
    finally:
        _WRITES.reset(token)


def _key(path: str | Path) -> str:
    return "-" if str(path) == "-" else os.path.realpath(path)


def record_written(path: str | Path) -> None:
    """Record ``path`` (``-``: stdout) as written by the innermost :func:`recording_writes` block
    (nothing outside one)."""
    record = _WRITES.get()
    if record is not None:
        record.add(_key(path))


def any_written() -> bool:
    """Whether any output was written inside the innermost :func:`recording_writes` block."""
    return bool(_WRITES.get())


def written(path: str | Path) -> bool:
    """Whether ``path`` (``-``: stdout) was written inside the innermost :func:`recording_writes`
    block (False outside one)."""
    return _key(path) in (_WRITES.get() or ())


class OutputError(OSError):
    """An output file that could not be written. ``filename`` is the file as the user named it (with
    its option, e.g. ``--json r.json``); ``strerror`` says what failed and that an earlier file
    there is intact; ``reason`` is the system's reason alone (``No space left on device``)."""

    def __init__(self, errno: int, strerror: str, filename: str, reason: str | None = None) -> None:
        super().__init__(errno, strerror, filename)
        self.reason = reason or strerror


def output_problem(path: Path, err: OSError) -> str:
    """What failed when writing ``path``, in words, and the state of an earlier file there: the
    system's reason (``No space left on device``) followed by "the earlier NAME is intact", or
    "nothing was written there" when there was no earlier file."""
    reason = err.strerror or str(err)
    earlier = (
        f"the earlier {path.name} is intact" if path.is_file() else "nothing was written there"
    )
    return f"{reason} ({earlier})"


def _fsync_folder(folder: Path) -> None:
    """Flush the rename in ``folder`` to the disk (a folder that cannot be opened, e.g. on Windows,
    is skipped)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _fsync_file(path: Path) -> None:
    """Flush the file ``path`` (written by a library, e.g. matplotlib or pyarrow) to the disk."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


@contextmanager
def replacing(path: str | Path, name: str | None = None) -> Iterator[Path]:
    """Yield a temporary path beside ``path`` (``.STEM.tmp-PID.SUFFIX``, same folder so the rename
    is atomic) to write the whole output to (a file, or a folder the block creates); when the block
    ends without an error, the temporary file is flushed to the disk and renamed over ``path``. A
    device or pipe (``/dev/null``) is written in place. On any error the temporary file is removed
    and ``path`` is left as it was.

    Args:
        path: the final output file.
        name: how the user named it, e.g. ``"--json r.json"`` (default: the path), used in the
            error.

    Raises:
        OutputError: an ``OSError`` during the block, the flush or the rename (errno kept), naming
            the file and saying the earlier one is intact. Other exceptions of the block propagate
            unchanged (the temporary file is removed).
    """
    path = Path(path)
    # a device or pipe (/dev/null): in place
    if path.exists() and not path.is_file() and not path.is_dir():
        try:
            yield path
        except OutputError:
            raise
        except OSError as e:
            raise OutputError(
                e.errno or errnos.EIO, e.strerror or str(e), name or str(path)
            ) from None
        record_written(path)
        return
    if path.is_symlink():  # (the file it points to is replaced, not the link)
        path = Path(os.path.realpath(path))
    # (suffix kept: it names the format)
    tmp = path.with_name(f".{path.stem}.tmp-{os.getpid()}{path.suffix}")
    try:
        yield tmp
        _fsync_file(tmp)
        if path.is_file():  # (the earlier file's permissions kept)
            os.chmod(tmp, path.stat().st_mode & 0o7777)
        os.replace(tmp, path)
    except OSError as e:
        _remove(tmp)
        if isinstance(e, OutputError):
            raise
        raise OutputError(e.errno or errnos.EIO, output_problem(path, e), name or str(path),
                          e.strerror or str(e)) from None
    except BaseException:
        _remove(tmp)
        raise
    _fsync_folder(path.parent)
    record_written(path)


def _remove(tmp: Path) -> None:
    """Remove the temporary file or folder ``tmp`` (nothing when it is absent or cannot be
    removed)."""
    if tmp.is_dir() and not tmp.is_symlink():
        import shutil

        shutil.rmtree(tmp, ignore_errors=True)
        return
    try:
        tmp.unlink()
    except OSError:
        pass


def write_atomic(path: str | Path, data: str | bytes, name: str | None = None) -> None:
    """Write ``data`` (text as UTF-8, or bytes) to ``path`` atomically (:func:`replacing`).

    Raises:
        OutputError: the file could not be written; ``path`` is left as it was.
    """
    raw = data.encode("utf-8") if isinstance(data, str) else data
    with replacing(path, name) as tmp:
        with open(tmp, "wb") as f:
            f.write(raw)
            f.flush()


def nonfinite_field(data: object, where: str = "") -> str | None:
    """The path (``front[3].bw_gbps_per_dim[1]``) of the first NaN or infinity in ``data`` (dicts,
    lists, tuples and floats, as JSON is written from), or None when every number is finite."""
    if isinstance(data, float):
        return None if math.isfinite(data) else (where or "(the value)")
    if isinstance(data, dict):
        items = ((f"{where}.{k}" if where else str(k), v) for k, v in data.items())
    elif isinstance(data, (list, tuple)):
        items = ((f"{where}[{i}]", v) for i, v in enumerate(data))
    else:
        return None
    for key, value in items:
        found = nonfinite_field(value, key)
        if found is not None:
            return found
    return None


def json_text(data: object, source: str) -> str:
    """``data`` as indented, strict JSON text (RFC 8259: no ``NaN`` / ``Infinity``), ending with a
    newline.

    Raises:
        InputError: a NaN or infinity in ``data``, naming ``source`` (the output, e.g. ``--json
            r.json``) and the field; the fix is to bring the input's numbers into range.
    """
    import json

    field = nonfinite_field(data)
    if field is not None:
        from ..errors import InputError

        raise InputError(
            source,
            field,
            "the result is not a finite number (an input value too large or too "
            "small for a double)",
            "bring the inputs that produce it into range; no result was written",
        )
    return json.dumps(data, indent=2, allow_nan=False) + "\n"
