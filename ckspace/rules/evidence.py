"""The compiler's evidence for the facts: the summary of the device audit (constraints/evidence/audit.json, written by
scripts/merge_audit.py --summary from scripts/data/audit-*.json), as `ckspace rules` shows it.

Per arch, the open space's precision on its uniform and stratified draws, the confusion of every compiled kernel and
how many of the accepted kernels that built hold the LDS the model's lds_bytes says;
per rule and arch, its near misses (compiled kernels that break that rule and no other) and how many failed. The
summary is data, not part of the model: it changes no kernel's verdict and no cache key (it is JSON, the model is the
TOML files).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from ..errors import DataError

FILE = Path("evidence") / "audit.json"


@dataclass(frozen=True)
class Count:
    """A rule's near misses on one arch: compiled, and how many of them failed."""

    compiled: int
    failed: int

    def text(self) -> str:
        return f"{self.failed}/{self.compiled}"


@dataclass(frozen=True)
class Draws:
    compiled: int
    built: int  # with matrix instructions and launchable

    def text(self) -> str:
        share = f" ({100 * self.built / self.compiled:.0f}%)" if self.compiled else ""
        return f"{self.built}/{self.compiled}{share}"


@dataclass(frozen=True)
class ArchAudit:
    uniform: Draws
    stratified: Draws
    confusion: dict[str, int]  # accepted_built, accepted_failed, rejected_built, rejected_failed
    compiled_isa_unread: int
    # The accepted kernels that built: how many of them hold exactly the model's lds_bytes (the group segment)
    lds: Draws = Draws(0, 0)


@dataclass(frozen=True)
class Audit:
    doc: str
    data: str
    archs: dict[str, ArchAudit]
    rules: dict[str, dict[str, Count]]

    def near_misses(self, rule: str) -> dict[str, Count]:
        return self.rules.get(rule, {})


def arch_order(arch: str) -> tuple[int, str]:
    """gfx90a, gfx942, gfx950, gfx1100, gfx1201: by the length of the name, then the name."""
    return len(arch), arch


def load_audit(root: Path) -> Audit | None:
    """The audit summary under the constraints folder `root`, or None where it has none (a user's own folder)."""
    path = root / FILE
    if not path.is_file():
        return None
    try:
        raw = json.loads(path.read_text())
        archs = {a: ArchAudit(Draws(int(v["uniform"]["compiled"]), int(v["uniform"]["built"])),
                              Draws(int(v["stratified"]["compiled"]), int(v["stratified"]["built"])),
                              {k: int(n) for k, n in v["confusion"].items()}, int(v.get("compiled_isa_unread", 0)),
                              Draws(int(v["lds"]["accepted_built"]), int(v["lds"]["model_equal"])))
                 for a, v in raw["archs"].items()}
        rules = {r: {a: Count(int(c["compiled"]), int(c["failed"])) for a, c in per.items()}
                 for r, per in raw["rules"].items()}
        return Audit(str(raw["doc"]), str(raw["data"]), dict(sorted(archs.items(), key=lambda kv: arch_order(kv[0]))),
                     {r: dict(sorted(per.items(), key=lambda kv: arch_order(kv[0]))) for r, per in rules.items()})
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise DataError(f"{path}: not an audit summary ({type(exc).__name__}: {exc}); rewrite it with "
                        "`python scripts/merge_audit.py DATA --summary FILE`") from None
