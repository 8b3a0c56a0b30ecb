"""Before compiling an emitted directory for an arch it was not selected for: which of its kernels that arch cannot
build, by the model (the facts of the arch, and the CK API revision's family), in a second instead of after minutes
of compiling."""

from __future__ import annotations

from pathlib import Path
from typing import Mapping, cast

from ..errors import CkspaceError
from ..rules.check import domain_verdicts, violations
from ..rules.data import load
from ..rules.model import Model, curation_families
from ..rules.names import parse_name
from ..rules.verdict import Verdict
from .ckapi import revisions


def invalid_on(manifest: Mapping[str, object], arch: str, constraints_dir: str | Path | None = None,
               families: tuple[str, ...] = ()) -> list[tuple[str, Verdict]]:
    """The kernels of the manifest that break a fact of `arch` (or of the CK API revision they were emitted for, or
    of `families`, e.g. a compiler's toolchain family), each with the first rule it breaks. Curation is not
    checked: a kernel CK would not choose still compiles."""
    data = load(Path(constraints_dir) if constraints_dir else None)
    facts = {f for f, fam in data.families.items() if fam.default} - curation_families(data)
    rev = manifest.get("ck_api")
    if isinstance(rev, str) and rev in revisions()[1]:
        facts |= set(revisions()[1][rev].families)
    facts |= set(families)
    model = Model(data, arch, frozenset(facts | {"model"}))
    out = []
    for name in cast("Mapping[str, object]", manifest.get("kernels", {})):  # the manifest's kernels by name
        try:
            cfg = parse_name(str(name))
        except CkspaceError:
            continue  # not a kernel name (a hand-edited manifest): the compiler will say
        broken = domain_verdicts(model, cfg) or violations(model, cfg)
        if families:  # the family's verdict first, where it has one
            broken = sorted(broken, key=lambda v: v.family not in families)
        if broken:
            out.append((str(name), broken[0]))
    return out
