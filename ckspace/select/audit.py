"""The kernels of a fact audit (`ckspace verify --audit`): what to compile to measure the facts against the compiler.

An audit plan has sections of kernel names:

* `uniform`: n kernels drawn uniformly from the space (its facts, and whatever else --rules leaves on);
* `stratified DIMS`: n kernels drawn with an equal share per group of DIMS (variant, ndim, dtype, tile, pipeline);
* `near-miss RULE`: for every enabled rule of a fact family (families.toml `layer = "fact"`), up to m kernels
  drawn uniformly from those that break that rule and no other enabled rule (KernelSpace.breaking). A rule no
  kernel breaks alone is implied by the others: its section is empty and says so.

The plan is a names file with its sections as comment lines (`# audit: uniform`, `# audit: near-miss
arch.lds-capacity`). Each section's names are in a seeded random order, not sorted: a compile budget takes a prefix
of every section, and only a prefix of a random order is itself a uniform draw (a sorted one is mostly `bwd_data`).
`verify --names` reads it as plain names, and `verify --audit --names` reads the sections back,
so a plan drawn where OR-Tools is installed compiles on a machine without it. A names file without sections is
audited too: each kernel is then classed by the rules it breaks on the machine that compiles it.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

from ..errors import DataError

HEADER = "# audit: "
DEFAULT_STRATIFY = "variant,ndim,dtype,tile,pipeline"


@dataclass
class Section:
    kind: str  # uniform | stratified | near-miss | listed (a names file without sections)
    detail: str = ""  # the stratify dimensions, or the rule id of a near-miss section
    names: list[str] = field(default_factory=list)
    population: int | None = None  # how many kernels the section was drawn from (None: not known here)
    note: str = ""  # why a near-miss section is empty

    @property
    def header(self) -> str:
        return HEADER + " ".join(p for p in (self.kind, self.detail) if p)


@dataclass
class AuditPlan:
    sections: list[Section]
    about: str = ""  # one line: arch, rules, seed (a comment at the top of the file)

    def names(self) -> list[str]:
        """Every kernel once, in the order of the sections."""
        return list(dict.fromkeys(n for s in self.sections for n in s.names))

    def interleaved(self) -> list[str]:
        """Every kernel once, the sections taken in turn (module function `interleaved`)."""
        return interleaved(self)

    def text(self) -> str:
        lines = [f"# ckspace verify --audit plan{': ' + self.about if self.about else ''}",
                 "# one kernel name per line; the '# audit:' lines are its sections (verify --audit --names reads them)"]
        for s in self.sections:
            lines.append(s.header)
            if s.population is not None:
                lines.append(f"#   drawn from {s.population:,} kernel(s)")
            if s.note:
                lines.append(f"#   {s.note}")
            lines += s.names
        return "\n".join(lines) + "\n"


def fact_rules(space) -> list:
    """The enabled rules of fact families (families.toml `layer = "fact"`), in rule-file order."""
    families = space.data.families
    return [r for r in space.model.rules if r.family in families and families[r.family].fact]


def draw(space, n: int, near: int, seed: int | str, stratify: str | None = DEFAULT_STRATIFY,
         rules: Sequence | None = None, log: Callable[[str], None] | None = None,
         filters: Mapping[str, Any] | None = None) -> AuditPlan:
    """The plan of an audit of `space` (see the module doc): n uniform, n stratified (unless `stratify` is empty)
    and up to `near` near misses of each fact rule (or of `rules`), every draw reproducible by `seed`; `filters`
    (variant, ndim, dtype, where) narrow every draw."""
    from .sample import sample_space, stratify_dimensions

    filters = dict(filters or {})
    sections = []
    picked, total = sample_space(space, n, seed, **filters)
    sections.append(Section("uniform", "", _shuffled(picked, seed, "uniform"), total))
    if stratify:
        dims = stratify_dimensions(stratify, list(space.data.fields))
        picked, total = sample_space(space, n, seed, dims, **filters)
        sections.append(Section("stratified", ",".join(d.name for d in dims), _shuffled(picked, seed, "stratified"),
                                total))
    # near == 0 asks for no near misses: drawing each rule's (a CP-SAT model per rule) would be minutes for nothing
    for rule in (fact_rules(space) if rules is None else rules) if near > 0 else []:
        if log is not None:
            log(f"drawing the near misses of {rule.id}")
        try:
            picked, total = sample_space(space.breaking(rule.id), near, seed, **filters)
        except ValueError as exc:  # a kernel that breaks it alone has no name (e.g. persistent without stream-K)
            sections.append(Section("near-miss", rule.id, [], None, f"no near miss has a name: {exc}"))
            continue
        note = "" if total else "no kernel breaks it alone: the other rules imply it"
        sections.append(Section("near-miss", rule.id, _shuffled(picked, seed, rule.id), total, note))
    return AuditPlan(sections, f"{space.arch}, families {','.join(sorted(space.families))}, seed {seed}")


def _shuffled(picked: Sequence[Mapping[str, object]], seed: int | str, section: str) -> list[str]:
    """The names of a draw in a random order of its own (seeded by the plan's seed and the section): the sample
    lists them sorted, and a budget that compiles a sorted prefix compiles a biased one."""
    names = sorted(str(c["name"]) for c in picked)
    random.Random(f"{seed}/{section}").shuffle(names)
    return names


def parse(lines: Sequence[str], label: str) -> AuditPlan | None:
    """The sections of a plan file's lines (None when it has no `# audit:` line: a plain names file)."""
    sections: list[Section] = []
    current: Section | None = None
    for number, raw in enumerate(lines, 1):
        line = raw.strip()
        if line.startswith(HEADER.strip()):
            words = line[len(HEADER.strip()):].split()
            if not words or words[0] not in ("uniform", "stratified", "near-miss") or \
                    (words[0] == "near-miss" and len(words) != 2) or len(words) > 2:
                raise DataError(f"{label}:{number}: not an audit section ('# audit: uniform', '# audit: stratified "
                                f"DIMS' or '# audit: near-miss RULE'): {line[:120]!r}")
            current = Section(words[0], words[1] if len(words) > 1 else "")
            sections.append(current)
            continue
        if current is not None and line.startswith("#") and not current.names:  # the header's own comment lines
            text = line.lstrip("#").strip()
            drawn = text.removeprefix("drawn from ").removesuffix(" kernel(s)").replace(",", "")
            if text.startswith("drawn from ") and drawn.isdigit():
                current.population = int(drawn)
            elif text:
                current.note = text
            continue
        name = line.split("#", 1)[0].strip()
        if not name:
            continue
        if current is None:
            current = Section("listed")
            sections.append(current)
        current.names.append(name)
    if not any(s.kind != "listed" for s in sections):
        return None
    if sections[0].kind == "listed":  # names a section header does not claim: no draw, no near miss of a rule
        raise DataError(f"{label}: {len(sections[0].names)} name(s) before the first '# audit:' section "
                        f"({sections[0].names[0]}); put them in a section or audit a plain names file")
    return AuditPlan(sections)


def classify(space, names: Sequence[str], configs: Mapping[str, Mapping[str, object]]) -> AuditPlan:
    """A plain names file as an audit: the kernels the facts accept, and per fact rule those that break it alone
    (kernels breaking several fact rules are counted in the confusion matrix only)."""
    from ..rules.check import violations

    facts = {r.id for r in fact_rules(space)}
    accepted = Section("listed", "accepted")
    near: dict[str, Section] = {}
    for name in names:
        broken = [v.rule for v in violations(space.model, dict(configs[name]))]  # the enabled rules
        if not broken:
            accepted.names.append(name)
        elif len(broken) == 1 and broken[0] in facts:
            near.setdefault(broken[0], Section("near-miss", broken[0])).names.append(name)
    return AuditPlan([accepted, *(near[r] for r in sorted(near))])


def interleaved(plan: AuditPlan) -> list[str]:
    """Every kernel once, the sections taken in turn (the draws, then each rule's near misses, one kernel each
    round): a compile budget that stops the run early leaves each section a share of its kernels compiled."""
    out: dict[str, None] = {}
    queues = [list(s.names) for s in plan.sections]
    while any(queues):
        for q in queues:
            if q:
                out.setdefault(q.pop(0), None)
    return list(out)
