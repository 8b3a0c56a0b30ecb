"""What an audit's compiles say about the facts (`ckspace verify --audit`).

The kernels of an audit plan (ckspace.select.audit) are compiled by verify, with its ISA checks; this module reads
the verdicts per section:

* a draw (uniform, stratified, or the accepted kernels of a plain names file): its precision, the share of the
  compiled kernels that build with matrix instructions, and its failures grouped by error (each a missing fact);
* the near misses of a fact rule: the share that fails (to build, or to hold a matrix instruction). A fact whose
  near misses compile is curation, or wrong;
* the confusion matrix over every compiled kernel: the facts' verdict (accepted, rejected) against the compiler's
  (builds with matrix instructions, fails).

Kernels that were not compiled (the budget ran out, or the CK API revision cannot express them) count nowhere but
in their own column. Targets (issue 25): precision at least 99% on every draw, and every fact's near misses failing
at least 95% of the time; `met` says whether a finished audit reached them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping

from .verify import FAILURES, VerifyResult, error_class

PRECISION_TARGET = 0.99
NEAR_MISS_TARGET = 0.95
BUILT = ("ok",)
FAILED = FAILURES  # failed to build, no matrix instruction, or no launch can run it


@dataclass
class SectionReport:
    kind: str
    detail: str
    kernels: int  # in the plan
    compiled: int  # built or failed (not: not run, unexpressible)
    built: int  # with matrix instructions
    failed: int  # failed to build, built without matrix instructions, or built for a block no launch can have
    not_run: int
    unexpressible: int
    population: int | None = None
    note: str = ""
    errors: list[tuple[str, int, str]] = field(default_factory=list)  # (error class, count, first kernel)
    built_examples: list[str] = field(default_factory=list)  # near misses that built (the rule's counterexamples)

    @property
    def share(self) -> float | None:
        """A draw: the built share (precision); a near-miss section: the failed share."""
        if not self.compiled:
            return None
        return (self.failed if self.kind == "near-miss" else self.built) / self.compiled

    @property
    def meets(self) -> bool | None:
        share = self.share
        if share is None:
            return None
        return share >= (NEAR_MISS_TARGET if self.kind == "near-miss" else PRECISION_TARGET)

    def to_json(self) -> dict[str, object]:
        return {"kind": self.kind, "detail": self.detail or None, "kernels": self.kernels, "compiled": self.compiled,
                "built": self.built, "failed": self.failed, "not_run": self.not_run,
                "unexpressible": self.unexpressible, "population": self.population, "share": self.share,
                "meets_target": self.meets, "note": self.note or None,
                "errors": [{"error": e, "kernels": n, "example": k} for e, n, k in self.errors],
                "built_examples": self.built_examples}


@dataclass
class AuditReport:
    arch: str
    toolchain: str
    sections: list[SectionReport]
    confusion: dict[str, dict[str, int]]  # facts' verdict -> compiler's verdict -> kernels
    stopped: str = ""

    @property
    def complete(self) -> bool:
        return not self.stopped and not any(s.not_run for s in self.sections)

    @property
    def misses(self) -> list[str]:
        """The sections below their target, each as one line."""
        out = []
        for s in self.sections:
            if s.meets is False:
                target = NEAR_MISS_TARGET if s.kind == "near-miss" else PRECISION_TARGET
                what = f"near misses of {s.detail} fail" if s.kind == "near-miss" else f"{_label(s)} precision"
                out.append(f"{what} {s.share:.1%} < {target:.0%} ({s.failed if s.kind == 'near-miss' else s.built} "
                           f"of {s.compiled})")
        return out

    @property
    def met(self) -> bool:
        return self.complete and not self.misses

    def text(self, revision: str) -> str:
        """The report as `verify --audit` prints it."""
        return text(self, revision)

    def markdown(self) -> str:
        """The tables of docs/audit.md."""
        return markdown(self)

    def to_json(self) -> dict[str, object]:
        return {"arch": self.arch, "toolchain": self.toolchain, "stopped": self.stopped or None,
                "complete": self.complete, "met": self.met, "misses": self.misses,
                "targets": {"precision": PRECISION_TARGET, "near_miss_failures": NEAR_MISS_TARGET},
                "sections": [s.to_json() for s in self.sections], "confusion": self.confusion}


def _label(s: SectionReport) -> str:
    if s.kind == "stratified":
        return f"stratified ({s.detail})"
    if s.kind == "listed":
        return "accepted kernels of the list"
    return s.kind


def report(space, plan, result: VerifyResult, configs: Mapping[str, Mapping[str, object]]) -> AuditReport:
    """The audit of `plan` (ckspace.select.audit.AuditPlan) from verify's `result`; `configs` by name."""
    from ..rules.check import violations

    status = {k.name: k for k in result.kernels}
    sections = []
    for sec in plan.sections:
        kernels = [status[n] for n in sec.names if n in status]
        compiled = [k for k in kernels if k.status in BUILT + FAILED]
        failed = [k for k in compiled if k.status in FAILED]
        groups: dict[str, list[str]] = {}
        for k in sorted(failed, key=lambda k: k.name):
            groups.setdefault(error_class(k.error), []).append(k.name)
        errors = sorted(((e, len(ns), ns[0]) for e, ns in groups.items()), key=lambda t: (-t[1], t[0]))
        built = sorted(k.name for k in compiled if k.status in BUILT)
        sections.append(SectionReport(
            sec.kind, sec.detail, len(sec.names), len(compiled), len(compiled) - len(failed), len(failed),
            # a compile killed at --compile-timeout gave no verdict: counted with those not run
            sum(1 for k in kernels if k.status in ("not-run", "timed-out")),
            sum(1 for k in kernels if k.status == "unexpressible"),
            sec.population, sec.note, errors, built[:3] if sec.kind == "near-miss" else []))
    confusion = {"accepted": {"built": 0, "failed": 0}, "rejected": {"built": 0, "failed": 0}}
    for k in result.kernels:
        if k.status not in BUILT + FAILED or k.name not in configs:
            continue
        verdict = "rejected" if violations(space.model, dict(configs[k.name])) else "accepted"
        confusion[verdict]["built" if k.status in BUILT else "failed"] += 1
    return AuditReport(result.arch, result.toolchain, sections, confusion, result.stopped)


def _share(s: SectionReport) -> str:
    return "-" if s.share is None else f"{s.share:.1%}"


def text(rep: AuditReport, revision: str) -> str:
    """The audit for a terminal: the draws, the near misses per fact rule, the confusion matrix, the verdict."""
    lines = [f"audit {rep.arch} · CK API {revision} · {rep.toolchain or 'nothing compiled'}"]
    draws = [s for s in rep.sections if s.kind != "near-miss"]
    near = [s for s in rep.sections if s.kind == "near-miss"]
    for s in draws:
        lines.append(f"{_label(s)}: {s.kernels} kernel(s){_from(s)}, {s.compiled} compiled: {s.built} build with "
                     f"matrix instructions, {s.failed} fail · precision {_share(s)}{_left(s)}")
        for error, n, example in s.errors:
            lines.append(f"  {n} × {error}  (e.g. {example})")
    if near:
        lines.append("near misses (kernels that break one fact rule alone): the share that fails")
        width = max(len(s.detail) for s in near)
        for s in near:
            if not s.kernels:
                lines.append(f"  {s.detail:<{width}}  -  {s.note or 'none drawn'}")
                continue
            if not s.compiled and s.unexpressible:
                lines.append(f"  {s.detail:<{width}}  -  the CK API revision cannot express its near misses")
                continue
            lines.append(f"  {s.detail:<{width}}  {s.failed:>3} of {s.compiled:<3} fail  {_share(s):>6}{_left(s)}"
                         + (f"  built: {s.built_examples[0]}" if s.built_examples else ""))
    c = rep.confusion
    lines += ["confusion matrix (compiled kernels; rows: the facts, columns: the compiler)",
              f"  {'':<9} {'builds':>7} {'fails':>7}",
              f"  {'accepted':<9} {c['accepted']['built']:>7} {c['accepted']['failed']:>7}",
              f"  {'rejected':<9} {c['rejected']['built']:>7} {c['rejected']['failed']:>7}"]
    if not rep.complete:
        lines.append(f"incomplete: {rep.stopped or 'some kernels were not compiled'}; run the same command again to "
                     "resume")
    for miss in rep.misses:
        lines.append(f"below target: {miss}")
    if rep.met:
        lines.append(f"the facts agree with the compiler: precision ≥ {PRECISION_TARGET:.0%} on every draw, every "
                     f"fact's near misses fail ≥ {NEAR_MISS_TARGET:.0%}")
    return "\n".join(lines)


def markdown(rep: AuditReport) -> str:
    """The audit as the tables of docs/audit.md and the README: draws, then near misses per rule."""
    lines = [f"**{rep.arch}** ({rep.toolchain or 'nothing compiled'})", "",
             "| draw | kernels | compiled | build with matrix instructions | precision |", "|---|---|---|---|---|"]
    for s in rep.sections:
        if s.kind != "near-miss":
            lines.append(f"| {_label(s)} | {s.kernels} | {s.compiled} | {s.built} | {_share(s)} |")
    lines += ["", "| fact rule | near misses compiled | failed | share |", "|---|---|---|---|"]
    for s in rep.sections:
        if s.kind == "near-miss":
            if not s.kernels:
                lines.append(f"| `{s.detail}` | - | - | {s.note or 'none drawn'} |")
            elif not s.compiled and s.unexpressible:
                lines.append(f"| `{s.detail}` | - | - | the CK API revision cannot express its near misses (never "
                             f"compiled) |")
            else:
                lines.append(f"| `{s.detail}` | {s.compiled} | {s.failed} | {_share(s)} |")
    return "\n".join(lines)


def _from(s: SectionReport) -> str:
    return "" if s.population is None else f" of {s.population:,}"


def _left(s: SectionReport) -> str:
    parts = []
    if s.not_run:
        parts.append(f"{s.not_run} not run")
    if s.unexpressible:
        parts.append(f"{s.unexpressible} unexpressible")
    return f" ({', '.join(parts)})" if parts else ""

