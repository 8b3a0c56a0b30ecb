"""The compiler as oracle, from the space layer: what `ckspace verify` needs besides `Space.verify`, `Space.cover`
and `Space.audit*`: the CK API revision of the headers a build will use, what a revision can express, the work
directory's layout, the verdicts, and the rule file `--record` appends proposals to.

Kept apart from `ckspace.space` so that a listing (`ckspace enumerate`) never imports the build machinery.
"""

from __future__ import annotations

from pathlib import Path

from .codegen.verify import COMPILES_LOG, STATUSES, WORK_DIR, VerifyResult, check_record_file  # noqa: F401
from .codegen.verify import record as record_proposals  # noqa: F401
from .codegen.verify import toolchain_family_for

__all__ = ["COMPILES_LOG", "STATUSES", "WORK_DIR", "VerifyResult", "build_revision", "check_record_file",
           "compiler_family", "record_proposals", "revision_families"]


def compiler_family(arch: str, compiler: str | None) -> str:
    """The rule family of the compiler a build uses on `arch` (`compiler`, else ROCm's, else the registry's):
    where verify's proposed rules go, e.g. toolchain-clang22."""
    return "toolchain-" + toolchain_family_for(arch, compiler)


def build_revision(ck_api: str | None, ck_include: str | Path | None = None) -> str:
    """The CK Tile API revision of the C++ a verify compiles: `ck_api`, else that of `ck_include`'s headers, else
    that of the headers the build will use (ROCm's, else the registry toolchain's: 2025.11)."""
    from .codegen import ckapi, toolchain

    if ck_api and ck_api != "auto":
        return ckapi.resolve_revision(ck_api)
    if ck_include:
        return ckapi.resolve_revision("auto", ck_include)
    found = toolchain.find_rocm() or toolchain.registry_toolchain()
    if found is not None and found.ck_include is not None:
        return ckapi.resolve_revision("auto", found.ck_include)
    return ckapi.resolve_revision("2025.11")  # the CK Tile of the registry toolchain build sets up (amd-aiter)


def revision_families(revision: str) -> frozenset[str]:
    """The rule families of a CK API revision: what its C++ cannot express (verify reports those kernels as
    unexpressible, and compiles none of them)."""
    from .codegen.ckapi import revisions

    return frozenset(revisions()[1][revision].families)
