"""Errors that reach the user as one line and an exact exit code, never as a traceback."""

from __future__ import annotations


class CkspaceError(Exception):
    """Bad input or a broken data file. The CLI prints `ckspace: <message>` and exits with `exit_code`."""

    exit_code = 2


class UsageError(CkspaceError):
    """An unknown arch, variant, dtype, format, field or option value."""


class DataError(CkspaceError):
    """A rule, table or objective file that cannot be read or is inconsistent."""


class ExprError(CkspaceError):
    """A syntax error or unknown name in a rule expression or a --where filter."""


class LeftOutWarning(UserWarning):
    """Listed configs (a user's --ck-config, CK's shipped lists) that break a fact of the arch and are left out.
    The API warns; the CLI prints its own report instead (ckspace.cli.output.report_rejected)."""


class IncompleteConfigError(UsageError):
    """A config (a dict given to the API) that lacks fields of its kernel family: a partial config is no kernel."""

    def __init__(self, missing: list[str], kind: str):
        self.missing = missing
        super().__init__(f"the config lacks {len(missing)} field(s) of a {kind} kernel: {', '.join(missing)} "
                         "(give every field, or a kernel name)")


class KernelNameError(CkspaceError):
    """A kernel name that does not follow CK's grammar.

    `part` names the offending part of the name (for example "tile"), `expected` says what the grammar wants there,
    and `suggestion` is the closest well-formed name when one is obvious.
    """

    def __init__(self, name: str, part: str, expected: str, got: str = "", suggestion: str | None = None):
        self.name = name
        self.part = part
        self.expected = expected
        self.got = got
        self.suggestion = suggestion
        got_text = f" (got {got!r})" if got else ""
        text = f"malformed kernel name {name!r}: {part}: expected {expected}{got_text}"
        if suggestion:
            text += f"; did you mean {suggestion!r}?"
        super().__init__(text)
