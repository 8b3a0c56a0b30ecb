"""Every process-wide memo of ckspace in one registry, so that one call forgets them all (`clear_all`: cold-run
measurements, tests that must not see another test's solved bags, a long-lived process whose data files changed).

A memo is registered where it is made: `memo("name", {})` returns the store it registers (a dict, an OrderedDict, a
set or a list: anything with clear()), and `@cached("name")` is functools.lru_cache with its cache registered. A
memo keyed without the data's digest must be cleared with the others: that is what keeps a cache from serving a stale
result within one process. (Locks and other state that is not a memo are not registered.)
"""

from __future__ import annotations

import functools
from typing import Any, Callable, Protocol, TypeVar


class Clearable(Protocol):
    def clear(self) -> None: ...


_REGISTRY: dict[str, Clearable] = {}
S = TypeVar("S", bound=Clearable)
F = TypeVar("F", bound=Callable[..., Any])


def memo(name: str, store: S) -> S:
    """Register `store` as the memo `name` (unique) and return it."""
    if name in _REGISTRY and _REGISTRY[name] is not store:
        raise ValueError(f"two memos named {name!r}")
    _REGISTRY[name] = store
    return store


class _LruCache:
    def __init__(self, function: Any) -> None:
        self.function = function

    def clear(self) -> None:
        self.function.cache_clear()


def cached(name: str, maxsize: int | None = 128) -> Callable[[F], F]:
    """functools.lru_cache(maxsize), registered as the memo `name`."""

    def wrap(function: F) -> F:
        wrapped = functools.lru_cache(maxsize=maxsize)(function)
        memo(name, _LruCache(wrapped))
        return wrapped  # type: ignore[return-value]

    return wrap


def clear_all() -> None:
    """Forget every memo of the process."""
    for store in _REGISTRY.values():
        store.clear()


def registered() -> dict[str, Clearable]:
    """The memos by name (for tests)."""
    return dict(_REGISTRY)
