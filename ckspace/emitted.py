"""A directory `ckspace emit` (or `Space.emit`) wrote: what its kernels are, which of them an arch or a compiler
cannot build, and its build with ninja. The Python API of `ckspace build`.

>>> import tempfile
>>> from ckspace import Space
>>> space = Space(arch="gfx950", ck_api="2025.11")
>>> with tempfile.TemporaryDirectory() as out:
...     _ = space.emit(space.select("tiny")[:2], out, revision="2025.11")
...     tree = Emitted(out)
...     tree.arch, len(tree.kernels), [name for name, _ in tree.invalid_on("gfx950")]
('gfx950', 2, [])
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Callable, Sequence

if TYPE_CHECKING:  # pragma: no cover
    from .codegen.build import BuildResult, ObjectCheck
    from .rules.verdict import Verdict


class Emitted:
    """An emitted directory, read from its manifest (a directory without one is one error line)."""

    def __init__(self, root: str | Path):
        from .codegen.manifest import require

        self.root = Path(root)
        self.manifest = require(self.root)

    @property
    def arch(self) -> str:
        return str(self.manifest["arch"])

    @property
    def kernels(self) -> dict[str, dict]:
        return dict(self.manifest["kernels"])

    def build_archs(self, archs: Sequence[str] | None = None) -> list[str]:
        """The archs a build compiles for: `archs`, else those emit was asked for, else its arch."""
        return list(archs or self.manifest.get("build_archs") or [self.arch])

    def invalid_on(self, arch: str, families: tuple[str, ...] = ()) -> "list[tuple[str, Verdict]]":
        """Its kernels that break a fact of `arch` (or of its CK API revision, or of `families`), each with the
        first rule it breaks; curation is not checked (a kernel CK would not choose still compiles)."""
        from .codegen import archcheck

        return archcheck.invalid_on(self.manifest, arch, families=families)

    def known_failures(self, archs: Sequence[str] | None = None,
                       compiler: str | None = None) -> "list[tuple[str, str, Verdict]]":
        """Its kernels the compiler `build` will use (`compiler`, else ROCm's, else the registry's) is known not to
        build (that compiler's family toolchain-NAME, from `ckspace verify`), as (arch, name, verdict)."""
        from .codegen import toolchain
        from .rules.data import load

        families = load().families
        out = []
        for arch in self.build_archs(archs):
            family = "toolchain-" + toolchain.family_for(arch, compiler)
            if family not in families:
                continue
            out += [(arch, n, v) for n, v in self.invalid_on(arch, (family,)) if v.family == family]
        return out

    def build(self, *, jobs: int | None = None, offload_archs: Sequence[str] | None = None,
              compiler: str | None = None, launcher: str | None = None, ck_include: str | Path | None = None,
              progress: Callable[[int, int, str], None] | None = None,
              log: Callable[[str], None] | None = None) -> "BuildResult":
        """Compile it with ninja: one device-only object per compile unit and arch, with ROCm's compiler, else
        the registry toolchain; incremental and interruptible."""
        from .codegen import build as B

        return B.build(self.root, jobs=jobs, offload_archs=offload_archs, compiler=compiler, launcher=launcher,
                       ck_include=ck_include, progress=progress, log=log)

    def check_objects(self, archs: Sequence[str] | None = None) -> "list[ObjectCheck]":
        """Each object: an AMDGPU ELF for its arch (e_flags), holding an entry point for every kernel of its unit."""
        from .codegen import build as B

        return B.check_objects(self.root, archs)
