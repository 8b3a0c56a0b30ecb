"""Shared fixtures. Tests never touch the user's cache: every session gets its own cache dir."""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent
if str(TESTS) not in sys.path:
    sys.path.insert(0, str(TESTS))  # the independent reference lives in tests/reference

# A suite started from a backgrounded shell inherits SIGINT ignored, and so would every ckspace it starts: the tests
# that press Ctrl-C would see nothing happen. A handled signal is reset to the default in an exec'd child, an ignored
# one is not, so handle it here (as Python does when it starts with SIGINT not ignored).
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.fixture(scope="session", autouse=True)
def _private_cache(tmp_path_factory: pytest.TempPathFactory):
    folder = tmp_path_factory.mktemp("ckspace-cache")
    old = os.environ.get("CKSPACE_CACHE_DIR")
    os.environ["CKSPACE_CACHE_DIR"] = str(folder)
    yield folder
    if old is None:
        os.environ.pop("CKSPACE_CACHE_DIR", None)
    else:
        os.environ["CKSPACE_CACHE_DIR"] = old


_FULL: dict[tuple[str, str], list[dict]] = {}


def full_set(arch: str, rules: str | None = None) -> list[dict]:
    """The enumerated set, computed once per session (enumeration is the expensive part of the suite)."""
    from ckspace import Space

    key = (arch, rules or "")
    if key not in _FULL:
        _FULL[key] = list(Space(arch=arch, rules=rules, use_cache=False).enumerate())
    return _FULL[key]
