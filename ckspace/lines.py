"""Lines of user input (names files, stdin), read with bounded memory: a line may not be longer than any input can
sensibly be, so /dev/zero or a binary file ends in one clear error instead of gigabytes and a crash."""

from __future__ import annotations

import io
from typing import IO, Iterator

from .errors import UsageError

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
