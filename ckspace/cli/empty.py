"""Why a command's kernels came out empty, when the catalog itself is: one note on stderr.

A filter that leaves nothing is the user's own doing and needs no word. A catalog with no kernel on the arch under
the chosen rules does: `emit --set tiny --ck-api 2025.11` on gfx1201 wrote nothing and said nothing, because CK's full
rule set is depthwise alone there and 2025.11 cannot build depthwise. The note names the revision's rules that empty
the catalog (checked on its kernels without them) and the catalogs that do have kernels there. It costs counts
(seconds), so it runs only on the empty path (enumerate, sample, coverage, emit; verify's error line).
"""

from __future__ import annotations

import dataclasses
import sys
from typing import IO, TYPE_CHECKING

if TYPE_CHECKING:
    from ..space import Space
    from ..spec import Spec

#: How many of the catalog's kernels without the revision's facts are checked against them to name the rules.
CHECKED = 500


def note_empty_catalog(space: Space, out: IO[str] | None = None) -> bool:
    """Print the note (empty_catalog_reason) on `out` (default stderr), if there is one; returns whether it did."""
    reason = empty_catalog_reason(space)
    if reason is not None:
        print(f"ckspace: note: {reason}", file=out or sys.stderr)
    return reason is not None


def empty_catalog_reason(space: Space) -> str | None:
    """Why the space's catalog has no kernel on its arch under its rules (the filters aside), or None when it has
    some (or is a user's list: report_rejected names every config the facts leave out there)."""
    import warnings

    from ..spec import api_revision

    catalog = space.catalog
    if catalog.user:
        return None
    with warnings.catch_warnings():  # the listed catalogs' left-out warnings: report_rejected's job, not this note's
        warnings.simplefilter("ignore")
        if sum(space.count().values()):
            return None
        spec = space.spec.spec
        plain = dataclasses.replace(spec, set_name=catalog.name, over=None, variant=None, ndim=None, dtype=None,
                                    where=None, trait_config=None, problem=None)
        why = _revision_reason(space, plain)
        others = _catalogs_with_kernels(space, plain)
    where = f"{space.arch}" + (f" under CK API {api_revision(spec.ck_api, spec.ck_include)}" if spec.ck_api else "")
    reason = f"{catalog.name} has no kernel on {where}{why}"
    if others:
        reason += ("; catalogs with kernels there: " + ", ".join(f"{name} ({n:,})" for name, n in others)
                   + " (--set CATALOG, or --over CATALOG for tests/tiny)")
    return reason


def _revision_reason(space: Space, plain: Spec) -> str:
    """' (N without CK API REV's facts; rejecting ...: RULE n, ...)' when the catalog has kernels without the
    revision's facts (the rules counted on at most CHECKED of them); '' otherwise."""
    from ..space import Space
    from ..spec import api_revision

    if plain.ck_api is None:
        return ""
    without = Space.from_spec(dataclasses.replace(plain, ck_api=None, ck_include=None))
    total = sum(without.count().values())
    if not total:
        return ""
    broken: dict[str, int] = {}
    checked = 0
    for config in without.enumerate():
        for verdict in space.check(config):
            if verdict.enabled:
                broken[verdict.rule] = broken.get(verdict.rule, 0) + 1
        checked += 1
        if checked >= CHECKED:
            break
    rules = ", ".join(f"{rule} {n:,}" for rule, n in sorted(broken.items(), key=lambda kv: (-kv[1], kv[0])))
    of = f"all {checked:,}" if checked == total else f"{checked:,} of them"
    revision = api_revision(plain.ck_api, plain.ck_include)
    return (f" ({total:,} without CK API {revision}'s facts; rejecting {of}: {rules})" if rules
            else f" ({total:,} without CK API {revision}'s facts)")


def _catalogs_with_kernels(space: Space, plain: Spec) -> list[tuple[str, int]]:
    """The other catalogs with kernels on the arch under the same rules, with their counts."""
    from ..space import Space
    from ..spec import archs_and_catalogs

    found: list[tuple[str, int]] = []
    for name in archs_and_catalogs(plain.constraints_dir)[1]:
        if name == space.catalog.name:
            continue
        n = sum(Space.from_spec(dataclasses.replace(plain, set_name=name)).count().values())
        if n:
            found.append((name, n))
    return found
