"""User input read with bounded memory: lines (names files, stdin), whole files and JSON documents. A line may not be
longer than any input can sensibly be, and a file is read with a bound whatever its size claims (st_size is 0 for
/dev/zero), so /dev/zero, a binary file, a FIFO or a JSON bomb ends in one clear error instead of gigabytes, a hang
or a traceback."""

from __future__ import annotations

import io
import json
import os
import stat
from typing import IO, Any, Iterable, Iterator, TypeAlias, cast

from .errors import CkspaceError, DataError, UsageError

MAX_LINE = 65_536  # characters; a build-log line holding a few names is far shorter
MAX_NAME = 512  # characters; CK's longest kernel names are about 200


def bounded_lines(stream: IO[str], what: str) -> Iterator[str]:
    """The lines of a text stream without their newline; an over-long line stops the reading with one error line
    (a line of MAX_LINE characters or more is not text meant for ckspace: /dev/zero, a binary file)."""
    lineno = 0
    while True:
        try:
            line = stream.readline(MAX_LINE + 1)
        except UnicodeDecodeError:
            raise UsageError(f"{what}: line {lineno + 1} is not UTF-8 text") from None
        except OSError as exc:
            raise UsageError(f"{what}: cannot read: {exc.strerror or exc}") from None
        if not line:
            return
        lineno += 1
        if len(line) > MAX_LINE or (len(line) == MAX_LINE + 1 and not line.endswith("\n")):
            raise UsageError(f"{what}: line {lineno} is longer than {MAX_LINE:,} characters; not a list of names")
        yield line.rstrip("\r\n")


def text_stream(binary: IO[bytes]) -> IO[str]:
    """A UTF-8 text view of a binary stream that turns undecodable bytes into U+FFFD (a malformed name, not a
    crash)."""
    return io.TextIOWrapper(binary, encoding="utf-8", errors="replace", newline=None)


# ---- whole files ---------------------------------------------------------------------------------------------------
_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOCTTY", 0)
_CHUNK = 1 << 20


def open_input(path: str | os.PathLike, label: str, *, regular_only: bool = False,
               error: type[CkspaceError] = UsageError) -> tuple[int, os.stat_result]:
    """A file descriptor of `path` for reading, and its fstat. Opened without blocking, so a FIFO with no writer
    cannot hang the open (it then reads as empty); the descriptor blocks again for the reads. A directory, or with
    `regular_only` anything but a regular file (a FIFO, a device: what a cache or a re-read input cannot be), is one
    error line. The caller closes the descriptor."""
    try:
        fd = os.open(path, _OPEN_FLAGS)
    except (OSError, ValueError) as exc:  # ValueError: a NUL in the path
        raise error(f"{label}: cannot read: {_reason(exc)}") from None
    try:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            raise error(f"{label}: cannot read: is a directory")
        if regular_only and not stat.S_ISREG(info.st_mode):
            raise error(f"{label}: cannot read: not a regular file")
        if not stat.S_ISREG(info.st_mode):
            os.set_blocking(fd, True)  # a FIFO with a writer (`<(cmd)`) is read to its end
    except BaseException:
        os.close(fd)
        raise
    return fd, info


def read_bounded(path: str | os.PathLike, limit: int, label: str, *, regular_only: bool = False,
                 error: type[CkspaceError] = UsageError) -> bytes:
    """The bytes of a file of at most `limit` bytes, read with that bound whatever the file claims to be: st_size is
    0 for /dev/zero and a lie for a file that grows, so at most limit + 1 bytes are ever read, and one past the limit
    is one error line. A FIFO does not block its open (open_input); a directory, an unreadable path or (with
    `regular_only`) a non-regular file is one error line too."""
    fd, info = open_input(path, label, regular_only=regular_only, error=error)
    try:
        if stat.S_ISREG(info.st_mode) and info.st_size > limit:
            raise error(f"{label}: file too large ({info.st_size:,} bytes; at most {limit:,})")
        chunks: list[bytes] = []
        total = 0
        while total <= limit:
            chunk = os.read(fd, min(_CHUNK, limit + 1 - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
    except OSError as exc:
        raise error(f"{label}: cannot read: {_reason(exc)}") from None
    finally:
        os.close(fd)
    if total > limit:
        raise error(f"{label}: file too large (more than {limit:,} bytes)")
    return b"".join(chunks)


def _reason(exc: BaseException) -> str:
    return (exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)) or type(exc).__name__


# ---- JSON ----------------------------------------------------------------------------------------------------------
MAX_INT_DIGITS = 64  # digits of a JSON integer: no count, size or id of a config comes near (2**63 has 19)


class _LongInt:
    """What an integer of more than MAX_INT_DIGITS digits parses as: its length, never its (quadratic) value."""

    __slots__ = ("digits",)

    def __init__(self, text: str):
        self.digits = len(text.lstrip("-"))


def parse_json(blob: bytes | str, label: str, *, error: type[CkspaceError] = UsageError) -> Any:
    """A JSON document of user input, or one error line naming `label`: bad UTF-8 or JSON (with its line and
    column), nesting too deep for the parser, or an integer too long to be a value, named by its key path
    (`instances[3].tile_m`) rather than Python's digit-limit ValueError."""
    found: list[_LongInt] = []

    def parse_int(text: str) -> object:
        if len(text) > MAX_INT_DIGITS:
            found.append(_LongInt(text))
            return found[-1]
        return int(text)

    try:
        text = blob.decode("utf-8") if isinstance(blob, bytes) else blob
    except UnicodeDecodeError as exc:
        line = cast(bytes, blob).count(b"\n", 0, exc.start) + 1  # only bytes are decoded
        raise error(f"{label}: not UTF-8 text (byte 0x{blob[exc.start]:02x} at line {line})") from None
    if not text.strip():
        raise error(f"{label}: not JSON: the file is empty")
    try:
        doc = json.loads(text, parse_int=parse_int)
    except json.JSONDecodeError as exc:
        raise error(f"{label}: not JSON: line {exc.lineno} column {exc.colno}: {exc.msg}") from None
    except RecursionError:
        raise error(f"{label}: arrays or objects nested too deeply to be read") from None
    except ValueError as exc:  # a value json cannot take (an integer never gets here: parse_int)
        raise error(f"{label}: not JSON: {' '.join(str(exc).split())[:200]}") from None
    if found:
        where, value = _first_long_int(doc)
        raise error(f"{label}: {where or 'the document'}: an integer of {value.digits:,} digits is out of range "
                    f"(at most {MAX_INT_DIGITS} digits)")
    return doc


def _first_long_int(doc: Any) -> tuple[str, _LongInt]:
    """The key path of the first over-long integer in document order (iteratively: any depth json accepted). Each
    item on the stack holds only its own key and a link to its parent's, so a deep and wide document costs no more
    than its size; the path is spelled out for the one integer found."""
    Link: TypeAlias = tuple  # (parent link or None, key: str | int)
    stack: list[tuple[Link | None, Any]] = [(None, doc)]
    while stack:
        link, value = stack.pop()
        if isinstance(value, _LongInt):
            return _spelled(link), value
        if isinstance(value, dict):
            stack.extend(reversed([((link, k), v) for k, v in value.items()]))
        elif isinstance(value, list):
            stack.extend(reversed([((link, i), v) for i, v in enumerate(value)]))
    raise AssertionError("an over-long integer was parsed but is not in the document")  # pragma: no cover


def _spelled(link: "tuple | None") -> str:
    keys: list[str | int] = []
    while link is not None:
        link, key = link
        keys.append(key)
    out = ""
    for key in reversed(keys):
        out += f"[{key}]" if isinstance(key, int) else (f".{_key(key)}" if out else _key(key))
    return out


def _key(key: str) -> str:
    return key if key.isidentifier() and len(key) <= 64 else json.dumps(key if len(key) <= 64 else key[:60] + "...")


def display(path: os.PathLike | str) -> str:
    """A path for an error line: as given, unless it holds characters that would break the line."""
    text = str(path)
    return text if text.isprintable() else repr(text)


# -- names files -------------------------------------------------------------------------------------------------------
MAX_NAMES = 5_000_000  # names in one file: more than any set of the curated or the streamed open space


def read_names(path: str | os.PathLike, what: str = "names file") -> list[str]:
    """Kernel names, one per line; blank lines and `#` comments are ignored; `-` reads stdin. Memory is bounded: an
    over-long line or more than MAX_NAMES names is one error line (/dev/zero, a binary file)."""
    return _names_of(read_lines(path, what), f"{what} {display(path)}")


def read_lines(path: str | os.PathLike, what: str = "names file") -> list[str]:
    """The lines of a names file as they are (comments too), bounded as read_names reads them."""
    import sys

    label = f"{what} {display(path)}"

    def bounded(stream) -> list[str]:
        lines, names = [], 0
        for line in bounded_lines(stream, label):
            lines.append(line)
            names += bool(line.split("#", 1)[0].strip())
            if names > MAX_NAMES or len(lines) > 4 * MAX_NAMES:  # memory stays bounded on endless input
                raise DataError(f"{label}: more than {MAX_NAMES:,} names")
        return lines

    try:
        if str(path) == "-":
            return bounded(sys.stdin)
        fd, _ = open_input(path, label, error=DataError)  # a FIFO without a writer does not block the open
        with open(fd, encoding="utf-8", errors="strict") as fh:
            return bounded(fh)
    except OSError as exc:
        raise DataError(f"{label}: cannot read: {exc.strerror or exc}") from None
    except UsageError as exc:
        raise DataError(str(exc)) from None


def _names_of(lines: Iterable[str], label: str) -> list[str]:
    out = []
    for line in lines:
        line = line.split("#", 1)[0].strip()
        if line:
            out.append(line)
            if len(out) > MAX_NAMES:
                raise DataError(f"{label}: more than {MAX_NAMES:,} names")
    return out
