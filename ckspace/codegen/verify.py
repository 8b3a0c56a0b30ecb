"""`ckspace verify`: the compiler as the oracle.

The kernels are compiled device-only in units of `unit_size` (emit + build, the same C++ and toolchain as `build`).
A unit that fails with more than one kernel is split in halves and both are compiled again, down to single kernels:
a failing kernel costs at most 2·log2(unit size) extra compiles, and a large unit of passing kernels costs one
compile. Verdicts are kept per kernel in the work directory, keyed by the kernel's C++ text, the arch and the
compiler, so a second run (after Ctrl-C, or with --budget) compiles only what is left. A compile that a run stopped
(its --budget ended, Ctrl-C, or --compile-timeout) is kept as an attempt, not a verdict: the next run compiles it
after the kernels not yet tried, so each resumed run spends its budget on new verdicts first. Verdicts are saved at
the end of each round, and on Ctrl-C or SIGTERM too: the units a stopped round had compiled keep theirs. Within a
round the dearest units (templates/compile-cost.toml) are started first, so no job waits at the round's end for a
dear compile.

Before anything is compiled, the kernels that CK API revision cannot express are set aside, from data: those of an
arch its headers do not compile for (templates/revisions.toml `unbuildable_archs`: gfx1250 in 2025.11) and those
that break a rule of the revision's own families (`ck-api-2025.11`: the wavelet pipeline, say, which its templates
have no name for). They are reported as `unexpressible`, with the reason, and never emitted or compiled.

A unit that compiles is read back (ckspace/codegen/isa.py): every unit is compiled to AMDGPU assembly and assembled
into its object (rusage.py --isa), and each kernel's entry points (attributed by their demangled names, as the
build's object check does) give its LDS bytes, registers, scratch and matrix instructions. A kernel whose code holds
no matrix instruction (v_mfma*, v_smfmac*, v_wmma*, v_swmmac*) compiled, but computes nothing of a GEMM (CK Tile
compiles its MFMA/WMMA body out where the arch lacks the instruction): it is reported as `no-matrix`, a failure of its
own. A kernel whose block has more threads than its code object's `.max_flat_workgroup_size` (LLVM caps every
kernel at 1024 and drops a larger __launch_bounds__) compiled, but no launch of it can run: `no-launch`, a failure
too. The model's `lds_bytes` (or `dw_lds_bytes`) is compared with the descriptor's group segment size.

A failure is a verdict only when a compiler ran and failed. A compile that ran no compiler is `not-run`, kept out of
the results and compiled again by the next run: its wrapper never started (no line in a compile log it can write:
the file was missing while a later call re-copied the tree, as once happened on the device machine) or could not
start the compiler (`rusage.py: cannot run`). It is said once per run in a warning with its error.

The failures are then grouped by their first error, and each group gets the smallest conjunction of `field == value`
conditions, found greedily, that all its kernels meet and no passing kernel does: a proposed rule in the rule file
syntax, for a `toolchain-*` family.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Mapping, Protocol, Sequence, cast

from . import build as B
from .units import cpp_groups, kernel_costs
from .rusage import CANNOT_START, TIMEOUT_TEXT
from . import isa
from .emit import emit
from ..errors import DataError, UsageError
from ..files import atomic_write, check_inside, check_subdir, ensure_dir, locked, sweep_temporaries
from ..signals import deferred

RESULTS = "verify-results.json"
RESULTS_VERSION = 2  # 2: the ISA has max_flat_workgroup_size (no-launch); older entries are compiled again
WORK_DIR = "work"  # where each round is emitted and built
STATUSES = ("ok", "failed", "no-matrix", "no-launch", "timed-out", "not-run", "unexpressible")
FAILURES = ("failed", "no-matrix", "no-launch")  # compiled to nothing usable, or not compiled at all
NO_LAUNCH = ("no-launch: the block has {threads} threads, more than the {limit} a launch of its code may have "
             "(.max_flat_workgroup_size of the code object: the runtime refuses the launch)")
NO_MATRIX = ("no-matrix: no matrix instruction (v_mfma, v_smfmac, v_wmma, v_swmmac) in the code of its "
             "{n} entry point(s)")
NAME_FIELDS_SKIPPED = ("name", "kind", "layout")  # never a condition of a proposed rule
NO_COMPILER = "no compiler ran"  # the error of a kernel whose compile never reached one (not-run, not a verdict)


@dataclass
class KernelResult:
    name: str
    status: str  # one of STATUSES: ok, failed, no-matrix, no-launch, timed-out, not-run, unexpressible
    error: str = ""
    seconds: float | None = None  # the compile of its smallest unit, per kernel of that unit
    unit_size: int = 0  # the size of the smallest unit it was compiled in
    cached: bool = False
    peak_mib: float | None = None  # the peak memory of that unit's compile (all its kernels together)
    isa: dict | None = None  # what its entry points hold (isa.summarize), when it compiled and could be read
    isa_error: str = ""  # why its ISA could not be read
    lds_model: int | None = None  # the model's lds_bytes (dw_lds_bytes for depthwise)
    same_cpp_as: str = ""  # its verdict is this kernel's: they differ only in fields the C++ ignores (pads)

    @property
    def lds_delta(self) -> int | None:
        """The descriptor's LDS bytes minus the model's: > 0 the model under-estimates, < 0 it over-estimates."""
        lds = self.isa.get("lds_bytes") if self.isa else None
        return None if lds is None or self.lds_model is None else lds - self.lds_model


class _Compared(Protocol):
    """A KernelResult whose lds_delta is known (lds_summary compares only those)."""

    @property
    def name(self) -> str: ...

    @property
    def lds_delta(self) -> int: ...


@dataclass
class Proposal:
    """A group of failures with the same first error, and the conditions that separate it from the passes."""

    error: str
    kernels: list[str]
    conditions: list[tuple[str, str, object]] | None  # None: no conjunction of field conditions separates them
    accept: str = ""  # a compiled kernel that meets the most of the conditions (the rule's accept example)
    first_error: str = ""  # the reproducer's own first error, as the compiler printed it

    def rule_text(self, family: str, index: int, arch: str = "", compiler: str = "", revision: str = "",
                  date: str = "") -> str:
        """The proposal as a rule of the rule file syntax: when the arch, require that not all conditions hold; its
        source names the compiler, the CK revision, the reproducer (the first failing kernel) and the error."""
        if not self.conditions:
            return f"# {len(self.kernels)} kernel(s) failing with {self.error!r}: no field values separate them"
        require = "not (" + " and ".join(f"{f} {op} {_literal(v)}" for f, op, v in self.conditions) + ")"
        error = (self.first_error or self.error)[:300]
        what = "compiles to code without a matrix instruction with " if self.error.startswith("no-matrix") else \
            "compiles to code no launch can run with " if self.error.startswith("no-launch") else \
            "fails to compile with "
        source = (f"ckspace verify{' ' + date if date else ''}: {arch or 'this arch'}, CK API {revision or '?'}, "
                  f"{compiler or 'the build compiler'}: {len(self.kernels)} failing kernel(s) with {error!r}; "
                  f"reproducer {self.kernels[0]}")
        lines = [
            "[[rule]]",
            f'id = "{family}.proposed-{index}"',
            f'family = "{family}"',
        ]
        if arch:
            lines.append(f"when = {json.dumps(f'arch.name == {_literal(arch)}')}")
        lines += [
            f"require = {json.dumps(require, ensure_ascii=False)}",
            f"message = {json.dumps(what + (compiler or 'this compiler') + ': ' + self.error[:120], ensure_ascii=False)}",
            f"rationale = {json.dumps('Found by ckspace verify: every kernel of the group fails with this error, and no compiled kernel meets all of these conditions (greedy set cover over the fields the failures share).', ensure_ascii=False)}",
            f"source = {json.dumps(source, ensure_ascii=False)}",
            f'reject = "{self.kernels[0]}"',
        ]
        if self.accept:
            lines.append(f'accept = "{self.accept}"')
        return "\n".join(lines)


@dataclass
class VerifyResult:
    arch: str
    toolchain: str = ""
    kernels: list[KernelResult] = field(default_factory=list)
    compiles: int = 0  # compile units run (rounds of bisection included)
    rounds: int = 0
    seconds: float = 0.0
    stopped: str = ""  # why not every kernel ran (budget)
    proposals: list[Proposal] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)  # what the run could not do as asked (each said once)

    @property
    def failed(self) -> list[KernelResult]:
        return [k for k in self.kernels if k.status == "failed"]

    @property
    def unexpressible(self) -> list[KernelResult]:
        return [k for k in self.kernels if k.status == "unexpressible"]

    @property
    def no_matrix(self) -> list[KernelResult]:
        return [k for k in self.kernels if k.status == "no-matrix"]

    @property
    def no_launch(self) -> list[KernelResult]:
        return [k for k in self.kernels if k.status == "no-launch"]

    @property
    def not_run(self) -> list[KernelResult]:
        """No verdict and not timed out: left by --budget, or their compile ran no compiler."""
        return [k for k in self.kernels if k.status == "not-run"]

    @property
    def timed_out(self) -> list[KernelResult]:
        """Killed at --compile-timeout: no verdict (not kept, so the next run compiles them again)."""
        return [k for k in self.kernels if k.status == "timed-out"]

    def lds_summary(self) -> dict[str, object]:
        """The model's lds_bytes against the descriptors: how many kernels were compared, how many agree, and the
        largest under-estimate (descriptor above the model) and over-estimate, each with its kernel."""
        compared = cast("list[_Compared]", [k for k in self.kernels if k.lds_delta is not None])
        under = max(compared, key=lambda k: (k.lds_delta, k.name), default=None)
        over = min(compared, key=lambda k: (k.lds_delta, k.name), default=None)
        return {
            "compared": len(compared), "agree": sum(1 for k in compared if k.lds_delta == 0),
            "max_under": {"bytes": under.lds_delta, "kernel": under.name} if under and under.lds_delta > 0 else None,
            "max_over": {"bytes": -over.lds_delta, "kernel": over.name} if over and over.lds_delta < 0 else None,
        }

    def to_json(self) -> dict[str, object]:
        return {
            "arch": self.arch, "toolchain": self.toolchain, "compiles": self.compiles, "rounds": self.rounds,
            "seconds": round(self.seconds, 1), "stopped": self.stopped or None,
            "counts": {s: sum(1 for k in self.kernels if k.status == s) for s in STATUSES},
            "kernels": [{"name": k.name, "status": k.status, "error": k.error or None,
                         "seconds": None if k.seconds is None else round(k.seconds, 1), "unit_size": k.unit_size,
                         "peak_mib": None if k.peak_mib is None else round(k.peak_mib),
                         "cached": k.cached, "isa": k.isa, "isa_error": k.isa_error or None,
                         "lds_model": k.lds_model, "lds_delta": k.lds_delta,
                         "same_cpp_as": k.same_cpp_as or None} for k in self.kernels],
            "lds": self.lds_summary(),
            "proposals": [{"error": p.error, "kernels": p.kernels,
                           "conditions": None if p.conditions is None else [list(c) for c in p.conditions]}
                          for p in self.proposals],
            "warnings": list(self.warnings),
        }


def _literal(v: object) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    return str(v) if isinstance(v, int) else json.dumps(v).replace('"', "'")


def _key(text_digest: str, arch: str, compiler: str) -> str:
    return hashlib.sha256(f"{text_digest}|{arch}|{compiler}".encode()).hexdigest()[:32]


def _load_results(root: Path) -> dict[str, dict]:
    try:
        data = json.loads((root / RESULTS).read_text())
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict) or data.get("version") != RESULTS_VERSION or not isinstance(data.get("kernels"), dict):
        return {}
    return {k: v for k, v in data["kernels"].items()
            if isinstance(v, dict) and v.get("status") in ("ok",) + FAILURES
            and isinstance(v.get("error", ""), str) and (v["status"] == "failed" or isinstance(v.get("isa"), dict)
                                                         or isinstance(v.get("isa_error"), str))}


def _load_attempts(root: Path) -> dict[str, float]:
    """Kernels (by key) an earlier run started and stopped without a verdict (its --budget ended, or the compile hit
    --compile-timeout) -> the longest of those compiles, in seconds. Not a verdict: only an order (see _verify)."""
    try:
        data = json.loads((root / RESULTS).read_text())
    except (OSError, ValueError):
        return {}
    got = data.get("attempts") if isinstance(data, dict) and data.get("version") == RESULTS_VERSION else None
    if not isinstance(got, dict):
        return {}
    return {k: float(v) for k, v in got.items()
            if isinstance(k, str) and isinstance(v, (int, float)) and not isinstance(v, bool) and v >= 0}


def _save_results(root: Path, results: Mapping[str, dict], attempts: Mapping[str, float] | None = None) -> None:
    data: dict[str, object] = {"version": RESULTS_VERSION, "kernels": dict(results)}
    open_attempts = {k: round(v, 1) for k, v in (attempts or {}).items() if k not in results}  # a verdict ends one
    if open_attempts:
        data["attempts"] = open_attempts
    atomic_write(root / RESULTS, json.dumps(data, indent=1, sort_keys=True).encode())


def _unit_seconds(root: Path) -> dict[str, float]:
    """Compile seconds per object from ninja's log (successful edges only): `start end mtime output hash`."""
    out: dict[str, float] = {}
    try:
        lines = (root / ".ckspace" / ".ninja_log").read_text().splitlines()  # build.ninja: builddir = .ckspace
    except OSError:
        return out
    for line in lines:
        parts = line.split("\t")
        if len(parts) >= 4 and parts[0].isdigit() and parts[1].isdigit():
            out[parts[3]] = (int(parts[1]) - int(parts[0])) / 1000.0
    return out


COMPILES_LOG = "compiles.log"  # one line per compile, by ckspace/codegen/rusage.py


def _measured(log: Path, offset: int) -> dict[str, tuple[float, float, int]]:
    """The compiles of one round (the log's lines after `offset`): object -> (peak MiB, seconds, exit status)."""
    out: dict[str, tuple[float, float, int]] = {}
    try:
        with open(log, "rb") as f:
            f.seek(offset)
            text = f.read().decode(errors="replace")
    except OSError:
        return out
    for line in text.splitlines():
        parts = line.split("\t")
        try:
            out[parts[0]] = (int(parts[1]) / 1024.0, float(parts[2]), int(parts[3]))
        except (IndexError, ValueError):
            continue
    return out


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def unexpressible(space, configs: Sequence[Mapping[str, object]], revision: str) -> dict[str, str]:
    """The kernels of `configs` that CK API `revision` cannot express, each with why (see the module doc): from the
    revision's data, never by rendering a template."""
    from ..rules.check import broken_rules, verdict
    from .ckapi import revisions, unbuildable_arch

    why_arch = unbuildable_arch(revision, space.arch)
    if why_arch is not None:
        return {str(c["name"]): f"CK API {revision}: {why_arch}" for c in configs}
    rev = revisions()[1][revision]
    ids = set(rev.unexpressible_rules)
    out: dict[str, str] = {}
    if not ids:
        return out
    for c in configs:
        # the revision's other rules are what its C++ cannot compile: such a kernel is written and compiled (that is
        # how a rule is checked again), only these are beyond its templates
        rule = next((r for r in broken_rules(space.model, c, rev.families) if r.id in ids), None)
        if rule is not None:
            out[str(c["name"])] = f"CK API {revision} cannot express it: {verdict(rule, c, space.model)}"
    return out


def verify(space, configs: Sequence[Mapping[str, object]], workdir: str | Path, *, revision: str,
           unit_size: int = 1, jobs: int | None = None, budget: float | None = None, compiler: str | None = None,
           ck_include: str | None = None, log: Callable[[str], None] | None = None,
           progress: Callable[[int, int, str], None] | None = None,
           after_emit: Callable[[Path], None] | None = None,
           warn: Callable[[str], None] | None = None, compile_timeout: float | None = None) -> VerifyResult:
    """Compile every config on `space.arch` (see the module doc); `after_emit(dir)` runs after each emit (tests use it
    to break a kernel on purpose); `warn(line)` hears, once each and as they happen, what the run cannot do as asked
    (they are in the result's `warnings` too). `compile_timeout` (seconds): a compile running longer is killed, and
    its kernels are `timed-out`, with no verdict."""
    root = ensure_dir(Path(workdir))
    with locked(root):  # one verify per work directory: what it finds half-written is no other run's
        sweep_temporaries(root)
        return _verify(space, configs, root, revision, unit_size, jobs, budget, compiler, ck_include, log, progress,
                       after_emit, warn, compile_timeout)


def _verify(space, configs, root: Path, revision, unit_size, jobs, budget, compiler, ck_include, log, progress,
            after_emit, warn, compile_timeout: float | None = None) -> VerifyResult:
    started = time.monotonic()
    arch = space.arch
    compiler_id = f"{compiler or 'registry'}|{ck_include or ''}|{revision}"
    by_name = {str(c["name"]): c for c in configs}
    result = VerifyResult(arch)

    def warning(text: str) -> None:
        if text not in result.warnings:
            result.warnings.append(text)
            if warn is not None:
                warn(text)

    # What ckspace writes into: the work directory (emit and build), and the compile log the wrapper appends to
    work = check_subdir(root, WORK_DIR)
    log_path: Path | None  # None where the log cannot be appended to
    log_path = check_inside(root, COMPILES_LOG).absolute()  # absolute: the compiles run in the work directory
    if not _appendable(log_path, warning):
        log_path = None

    verdicts: dict[str, KernelResult] = {}
    cannot = unexpressible(space, configs, revision)
    if cannot:
        from .ckapi import unbuildable_arch

        why_arch = unbuildable_arch(revision, arch)
        if why_arch is not None:
            warning(f"CK API {revision} cannot build for {arch}: {why_arch}; none of the {len(cannot)} kernel(s) "
                    "is compiled (reported as unexpressible)")
        else:
            warning(f"{len(cannot)} kernel(s) cannot be expressed in CK API {revision} and are not compiled "
                    "(reported as unexpressible, each with the rule)")
        for n, why in cannot.items():
            verdicts[n] = KernelResult(n, "unexpressible", why)
    names = [n for n in by_name if n not in cannot]  # in the order given: a budget cuts the end of the list
    results = _load_results(root)

    # The kernel text decides the key: emit everything once (cheap) to learn each kernel's digest.
    keys: dict[str, str] = {}
    if names:
        emit(space, [by_name[n] for n in names], work, revision=revision, chunk_size=max(unit_size, 1))
        manifest = json.loads((work / "manifest.json").read_text())
        keys = {n: _key(str(manifest["kernels"][n]["digest"]), arch, compiler_id) for n in names}
    pending = []
    for n in names:
        hit = results.get(keys[n])
        if hit is not None:
            verdicts[n] = KernelResult(n, hit["status"], hit.get("error", ""), hit.get("seconds"),
                                       int(hit.get("unit_size", 0) or 0), cached=True, peak_mib=hit.get("peak_mib"),
                                       isa=hit.get("isa"), isa_error=hit.get("isa_error") or "")
        else:
            pending.append(n)
    # One compile per distinct C++: kernels that differ only in fields the C++ ignores (pad_m/n/k) take the verdict
    # of the first of them compiled, or known from an earlier run
    followers: dict[str, list[str]] = {}
    for group in cpp_groups([by_name[n] for n in names], space.data.fields).values():
        known = next((n for n in group if n in verdicts), None)
        lead = known or next(n for n in group if n in pending)
        for n in group:
            if n != lead and n not in verdicts:
                followers.setdefault(lead, []).append(n)
    shadow = {n for f in followers.values() for n in f}
    pending = [n for n in pending if n not in shadow]
    # A kernel an earlier run started but stopped (at its --budget or --compile-timeout) goes after the kernels not yet
    # tried, the longest tried last: each resumed run spends its budget on new verdicts before it spends it again on
    # the compiles that did not end last time. Among the untried the order given stays (a budget cuts its end).
    attempts = _load_attempts(root)
    pending.sort(key=lambda n: attempts.get(keys[n], 0.0))

    total = len(pending)
    done = 0
    # Units per round ≈ 8 per job. A round ends when its slowest compile does, so a short round leaves jobs idle
    # behind one long compile; the budget needs no short rounds (build() stops ninja at the deadline itself).
    batch = max(unit_size, 1) * max(jobs or 2, 1) * 8
    queue: list[list[str]] = [pending[i:i + unit_size] for i in range(0, len(pending), max(unit_size, 1))]
    deadline = None if budget is None else started + budget
    while queue:
        if deadline is not None and time.monotonic() >= deadline:
            result.stopped = f"--budget {budget:.0f}s spent"
            break
        units: list[list[str]] = []
        while queue and sum(len(u) for u in units) < batch:
            units.append(queue.pop(0))
        result.rounds += 1
        # Dearest units first (templates/compile-cost.toml): ninja starts them in this order, so a round's tail is its
        # cheap compiles and no job waits long for a dear one that started last. Units an earlier run stopped still
        # go after the untried ones.
        unit_cost = dict(zip((n for u in units for n in u),
                             kernel_costs([by_name[n] for u in units for n in u], arch)))
        units.sort(key=lambda u: (max(attempts.get(keys[n], 0.0) for n in u), -sum(unit_cost[n] for n in u)))
        emit(space, [by_name[n] for u in units for n in u], work, revision=revision, units=units)
        if after_emit is not None:
            after_emit(work)
        _drop_objects_without_assembly(work, arch, len(units))
        offset = _size(log_path) if log_path is not None else 0
        round_kernels = sum(len(u) for u in units)

        def unit_done(finished: int, of: int, desc: str, before: int = done) -> None:
            if progress is not None:  # a unit of the round ended: its kernels' share of the round, as a count
                _report(progress, before + round_kernels * finished // max(of, 1), total, result, verdicts, started)

        fields = {n: k["fields"] for n, k in json.loads((work / "manifest.json").read_text())["kernels"].items()}

        def record_built(unit: list[str], obj: str, cost: tuple[float, float, int] | None,
                         logged_seconds: float | None) -> None:
            """The verdicts of a unit that compiled, from its ISA (the .s stays till the next round)."""
            per = cost[1] if cost is not None else logged_seconds
            peak = cost[0] if cost is not None else None
            read = isa.read_unit((work / obj).with_suffix(".s"), work / obj, {n: fields[n] for n in unit})
            for n in unit:
                summary, why = read[n]
                status, error = "ok", ""
                threads = block_threads(space, by_name[n])
                limit = summary.get("max_flat_workgroup_size") if summary is not None else None
                if summary is not None and not isa.has_matrix(summary):
                    status, error = "no-matrix", NO_MATRIX.format(n=summary["entry_points"])
                elif threads is not None and isinstance(limit, int) and threads > limit:
                    status, error = "no-launch", NO_LAUNCH.format(threads=threads, limit=limit)
                verdicts[n] = KernelResult(n, status, error, None if per is None else per / len(unit), len(unit),
                                           peak_mib=peak, isa=summary, isa_error=why)
                results[keys[n]] = {"status": status, "error": error, "seconds": verdicts[n].seconds,
                                    "unit_size": len(unit), "peak_mib": peak, "isa": summary, "isa_error": why}

        try:
            built = B.build(work, jobs=jobs, offload_archs=[arch], compiler=compiler, ck_include=ck_include,
                            log=log, deadline=deadline, measure=log_path, isa=True, compile_timeout=compile_timeout,
                            progress=unit_done)
        except KeyboardInterrupt:  # Ctrl-C or SIGTERM: keep what the round built before it, then stop
            with deferred():
                _keep_finished(units, arch, work, _measured(log_path, offset) if log_path is not None else {},
                               record_built, attempts, keys)
                _save_results(root, results, attempts)
            raise
        result.toolchain = built.toolchain
        seconds = _unit_seconds(work)
        measured = _measured(log_path, offset) if log_path is not None else {}
        failed_by_unit = {f.unit: f for f in built.failures}
        log_broken = _log_unwritable(built.log)  # then a compile that ran has no line either
        unfinished: list[list[str]] = []
        unstarted: list[str] = []  # the errors of compiles that ran no compiler
        unmeasured = 0
        for index, unit in enumerate(units):
            rel = f"units/grouped_conv_instances_{index:04d}.cpp"
            obj = f"obj/{arch}/grouped_conv_instances_{index:04d}.o"
            failure = failed_by_unit.get(rel)
            cost = measured.get(obj)
            if built.stopped and failure is None and not _built_this_round(work, obj, cost):
                unfinished.append(unit)  # stopped at the deadline before it was compiled: the next run does it
                if cost is not None:  # it was compiling when the deadline came: the next run tries it late
                    for n in unit:
                        attempts[keys[n]] = max(attempts.get(keys[n], 0.0), cost[1])
                continue
            if failure is not None and _ran_no_compiler(failure.error, cost is not None or log_path is None or
                                                        log_broken):
                for n in unit:  # no compiler's verdict: the next run compiles it again
                    verdicts[n] = KernelResult(n, "not-run", f"{NO_COMPILER}: {failure.error}")
                unstarted.append(failure.error)
                done += len(unit)
                continue
            result.compiles += 1
            if cost is None and log_path is not None:  # the wrapper writes a line for every compile it ran
                unmeasured += 1
            if failure is None:
                record_built(unit, obj, cost, seconds.get(obj))
                done += len(unit)
            elif failure.error.startswith(TIMEOUT_TEXT):
                # killed at --compile-timeout: no verdict for any kernel of the unit, and none kept (a later run with
                # more time compiles them again); bisecting would only spend the time twice
                for n in unit:
                    verdicts[n] = KernelResult(n, "timed-out", failure.error,
                                               cost[1] / len(unit) if cost is not None else None, len(unit))
                    spent = cost[1] if cost is not None else float(compile_timeout or 0.0)
                    attempts[keys[n]] = max(attempts.get(keys[n], 0.0), spent)
                done += len(unit)
            elif len(unit) == 1:
                n = unit[0]
                peak = cost[0] if cost is not None else None
                verdicts[n] = KernelResult(n, "failed", failure.error, cost[1] if cost is not None else None, 1,
                                           peak_mib=peak)
                results[keys[n]] = {"status": "failed", "error": failure.error, "unit_size": 1,
                                    "seconds": verdicts[n].seconds, "peak_mib": peak}
                done += 1
            else:  # bisect: both halves go back to the front of the queue
                half = math.ceil(len(unit) / 2)
                queue[:0] = [unit[:half], unit[half:]]
        if unstarted and not any(w.startswith(NO_COMPILER) for w in result.warnings):  # said once a run
            warning(f"{NO_COMPILER} in {len(unstarted)} compile(s) of this round, so their kernels have no verdict "
                    f"and the next run compiles them again (first: {unstarted[0]})")
        if unmeasured and not any(w.startswith(COMPILES_LOG) for w in result.warnings):  # said once a run
            warning(f"{COMPILES_LOG} ({log_path}) got no line for some compiles, so their peak memory is unknown"
                    f"{_wrapper_error(built.log)}")
        _save_results(root, results, attempts)
        if unfinished:
            queue[:0] = unfinished
        if built.stopped:
            result.stopped = f"--budget {budget:.0f}s spent"
            break
        if progress is not None:
            _report(progress, done, total, result, verdicts, started)
    for lead, others in followers.items():
        got = verdicts.get(lead)
        if got is None or got.status in ("not-run", "timed-out"):
            continue  # no verdict to share (the next run compiles the lead again)
        for n in others:
            verdicts[n] = dataclasses.replace(got, name=n, same_cpp_as=lead)
            results[keys[n]] = {"status": got.status, "error": got.error, "seconds": got.seconds,
                                "unit_size": got.unit_size, "peak_mib": got.peak_mib, "isa": got.isa,
                                "isa_error": got.isa_error}
    if followers:
        _save_results(root, results, attempts)
    for n in sorted(by_name):
        k = verdicts.get(n) or KernelResult(n, "not-run")
        if k.isa is not None:
            k.lds_model = model_lds(space, by_name[n])
        result.kernels.append(k)
    unread = [k for k in result.kernels if k.status == "ok" and k.isa is None]
    if unread:
        warning(f"the ISA of {len(unread)} kernel(s) that compiled could not be read, so whether their code holds a "
                f"matrix instruction is unknown (first: {unread[0].name}: {unread[0].isa_error})")
    result.seconds = time.monotonic() - started
    result.proposals = propose([(by_name[k.name], k.error) for k in result.kernels
                                if k.status in FAILURES],
                               [by_name[k.name] for k in result.kernels if k.status == "ok"])
    return result


def _report(progress: Callable[[int, int, str], None], done: int, total: int, result: "VerifyResult",
            verdicts: Mapping[str, "KernelResult"], started: float) -> None:
    """Where the run is: kernels done of those to compile, the round, the failures so far and the time left at the
    pace so far."""
    failed = sum(1 for v in verdicts.values() if v.status in FAILURES)
    spent = time.monotonic() - started
    left = "" if not 0 < done < total else f" · about {_duration(spent / done * (total - done))} left"
    progress(min(done, total), total, f"round {result.rounds} · {failed} failed{left}")


def _duration(seconds: float) -> str:
    minutes, secs = divmod(int(seconds + 0.5), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m" if hours else f"{minutes}m{secs:02d}s" if minutes else f"{secs}s"


def derived_int(space, config: Mapping[str, object], name: str) -> int | None:
    """A derived quantity of a kernel (fields.toml `derive.NAME`) as an integer, or None where it does not apply to
    the kernel's family or reads a field the config lacks."""
    from ..rules import expr as E
    from ..rules.model import kind_of_variant

    derive = space.data.derives.get(name)
    if derive is None or not derive.applies_to(kind_of_variant(str(config.get("variant")))):
        return None
    try:
        value = E.evaluate(derive.expr, config, space.model.resolve)
    except Exception:  # a field the formula reads is missing: nothing to compare with
        return None
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def block_threads(space, config: Mapping[str, object]) -> int | None:
    """The threads of a kernel's workgroup (the derived `threads`: warp size × waves), or None (depthwise)."""
    return derived_int(space, config, "threads")


def model_lds(space, config: Mapping[str, object]) -> int | None:
    """The model's LDS bytes of a kernel: the derived lds_bytes (dw_lds_bytes for a depthwise kernel), or None."""
    from ..rules.model import kind_of_variant

    depthwise = kind_of_variant(str(config.get("variant"))) == "depthwise"
    return derived_int(space, config, "dw_lds_bytes" if depthwise else "lds_bytes")


def _keep_finished(units: Sequence[list[str]], arch: str, work: Path,
                   measured: Mapping[str, tuple[float, float, int]],
                   record_built: Callable[[list[str], str, tuple[float, float, int], None], None],
                   attempts: dict[str, float], keys: Mapping[str, str]) -> None:
    """On a stop (Ctrl-C, SIGTERM) in a round: the verdicts of its units that compiled before it, and the attempts of
    those it stopped (compiled: `_built_this_round`)."""
    for index, unit in enumerate(units):
        obj = f"obj/{arch}/grouped_conv_instances_{index:04d}.o"
        cost = measured.get(obj)
        if cost is None:
            continue
        if cost[2] < 0:  # stopped by the signal: the next run tries it after the untried
            for n in unit:
                attempts[keys[n]] = max(attempts.get(keys[n], 0.0), cost[1])
            continue
        if _built_this_round(work, obj, cost):
            record_built(unit, obj, cost, None)


def _built_this_round(work: Path, obj: str, cost: tuple[float, float, int] | None) -> bool:
    """Whether a unit of a round that a stop (a deadline, Ctrl-C) cut compiled: the wrapper logged its compile with
    status 0, and its object was written after its assembly was (an object older than the assembly is an earlier
    round's, still in place while the compile that replaces it is written)."""
    if cost is None or cost[2] != 0:
        return False
    try:
        return (work / obj).stat().st_mtime >= (work / obj).with_suffix(".s").stat().st_mtime
    except OSError:  # no object, or no assembly
        return False


def _drop_objects_without_assembly(work: Path, arch: str, units: int) -> None:
    """The objects of this round's units that have no assembly next to them (a build without --isa, an older
    ckspace's) are removed, so that ninja compiles them again rather than leave the ISA unread."""
    from .emit import object_path

    for index in range(units):
        obj = work / object_path(arch, f"units/grouped_conv_instances_{index:04d}.cpp")
        if obj.is_file() and not obj.with_suffix(".s").is_file():
            _remove(obj)


def _remove(path: Path) -> None:
    try:
        path.unlink()
    except OSError:
        pass


def _appendable(path: Path, warning: Callable[[str], None]) -> bool:
    """Whether the compile log can be appended to (it is created if missing); a warning once if not, and then the
    compiles run unmeasured rather than each failing to write it."""
    import os

    try:
        os.close(os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC | getattr(os, "O_NOFOLLOW", 0),
                         0o644))
    except OSError as exc:
        warning(f"cannot write {path}: {exc.strerror or exc}; the compiles' peak memory is not measured")
        return False
    return True


def _ran_no_compiler(error: str, logged: bool) -> bool:
    """Whether a failed compile ran no compiler: the wrapper said it could not start one, or the wrapper itself never
    ran (`logged`: it wrote the compile's line, or no line could be expected of it)."""
    return error.startswith(CANNOT_START) or not logged


def _log_unwritable(build_log: Path | None) -> bool:
    """Whether the compile wrapper said, in ninja's output, that it cannot write its lines."""
    try:
        text = build_log.read_text(errors="replace") if build_log is not None else ""
    except OSError:
        return False
    return any(line.startswith(_RUSAGE_PREFIX + "cannot write") for line in text.splitlines())


def _wrapper_error(build_log: Path | None) -> str:
    """The compile wrapper's own complaint in ninja's output (`rusage.py: ...`), as `: <it>`, or ''."""
    if build_log is None:
        return ""
    try:
        text = build_log.read_text(errors="replace")
    except OSError:
        return ""
    for line in text.splitlines():
        if line.startswith(_RUSAGE_PREFIX):
            return ": " + line.strip()
    return ""


_RUSAGE_PREFIX = "rusage.py: "


# -- from failures to a rule -----------------------------------------------------------------------------------------
def error_class(error: str) -> str:
    """A first error without its paths, line numbers, quoted names, addresses and numbers: failures of one cause look
    alike (LLVM's "Cannot select: 0x7ff2...: v2i16,ch = ... Constant:i32<12>" differs in every kernel)."""
    text = re.sub(r"\S+\.(?:hpp|cpp|h):\d+(?::\d+)?:?", "", error)
    text = re.sub(r"'[^']*'", "'…'", text)
    text = re.sub(r"\b0x[0-9a-fA-F]+", "ADDR", text)
    text = re.sub(r"\d+", "N", text)
    return " ".join(text.split())[:200]


Condition = tuple[str, str, object]  # (field, "==" | ">=" | "<=", value)


def _holds(cfg: Mapping[str, object], cond: Condition) -> bool:
    f, op, v = cond
    if f not in cfg:
        return False
    x = cfg[f]
    if op == "==":
        return x == v and type(x) is type(v)
    if isinstance(x, bool) or not isinstance(x, int):
        return False
    return x >= v if op == ">=" else x <= v  # type: ignore[operator]


def _candidates(failed: Sequence[Mapping[str, object]]) -> list[Condition]:
    """What every failed config meets: a value they all share, or for a number the range they span."""
    out: list[Condition] = []
    for k in sorted(failed[0]):
        if k in NAME_FIELDS_SKIPPED or not all(k in f for f in failed):
            continue
        values = [f[k] for f in failed]
        if all(v == values[0] and type(v) is type(values[0]) for v in values):
            out.append((k, "==", values[0]))
        elif all(isinstance(v, int) and not isinstance(v, bool) for v in values):
            out += [(k, ">=", min(values)), (k, "<=", max(values))]  # type: ignore[type-var]
    return out


def separate(failed: Sequence[Mapping[str, object]], passed: Sequence[Mapping[str, object]]) -> list[Condition] | None:
    """The fewest conditions (greedy set cover) that every failed config meets and no passed one does: each a shared
    value (`field == v`) or, for a number, the failures' bound (`field >= min`, `field <= max`); None when the
    passes cannot all be excluded (a passed kernel meets every condition the failures share)."""
    if not failed:
        return None
    cands = _candidates(failed)
    left = list(range(len(passed)))
    chosen: list[Condition] = []
    while left:
        best: Condition | None = None
        best_out: list[int] = []
        for c in cands:
            if c in chosen:
                continue
            out = [i for i in left if not _holds(passed[i], c)]
            if len(out) > len(best_out):
                best, best_out = c, out
        if best is None:
            return None
        chosen.append(best)
        gone = set(best_out)
        left = [i for i in left if i not in gone]
    return chosen or None


def propose(failed: Sequence[tuple[Mapping[str, object], str]], passed: Sequence[Mapping[str, object]]) -> list[Proposal]:
    groups: dict[str, list[tuple[Mapping[str, object], str]]] = {}
    for cfg, error in failed:
        groups.setdefault(error_class(error), []).append((cfg, error))
    out = []
    for error, members in sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        cfgs = [c for c, _ in sorted(members, key=lambda m: str(m[0]["name"]))]
        conditions = separate(cfgs, passed)
        out.append(Proposal(error, [str(c["name"]) for c in cfgs], conditions, _closest(passed, conditions),
                            min(members, key=lambda m: str(m[0]["name"]))[1]))
    return out


def _closest(passed: Sequence[Mapping[str, object]], conditions: Sequence[Condition] | None) -> str:
    """The compiled kernel that meets the most conditions (ties: the first name): the accept example of a rule."""
    if not passed or not conditions:
        return ""
    best = max(sorted(passed, key=lambda c: str(c["name"])), key=lambda c: sum(_holds(c, k) for k in conditions))
    return str(best["name"])


# -- --record FILE: the proposals appended to a rule file -------------------------------------------------------
def check_record_file(path: str) -> Path:
    """--record FILE, checked before any compile: a TOML rule file (or none yet) in a writable directory."""
    import os
    from ..rules import schema

    target = Path(path)
    if target.is_dir():
        raise UsageError(f"--record {path}: a directory; give a rule file (e.g. toolchain-clang22.toml)")
    if target.exists():  # read as a data file: a regular file of bounded size (not /dev/zero, not a FIFO)
        label = f"--record {schema.display(path)}"
        try:
            data = schema.parse_toml(schema.read_bytes(target, label), label)
        except DataError as exc:
            why = str(exc).removeprefix(label + ": ")
            raise UsageError(f"{label}: not a readable TOML rule file ({why})") from None
        if set(data) - {"rule"}:
            raise UsageError(f"--record {path}: a rule file holds only [[rule]] tables, "
                             f"not {sorted(set(data) - {'rule'})}")
    parent = target.parent if str(target.parent) else Path(".")
    if not parent.is_dir() or not os.access(parent, os.W_OK):
        raise UsageError(f"--record {path}: {parent} is not a writable directory")
    return target


def record(target: Path, result: VerifyResult, rev: str, compiler: str | None) -> int:
    """Append the proposals that have conditions to the rule file, numbered after the ones it holds (atomic)."""
    import datetime
    from ..rules import schema

    family = "toolchain-" + toolchain_family_for(result.arch, compiler)  # = ckspace.oracle.compiler_family
    label = f"--record {schema.display(target)}"
    old = schema.read_bytes(target, label).decode("utf-8", errors="replace") if target.exists() else (
        "# Proposed by `ckspace verify --record`: what the compiler could not build, with a reproducer each.\n"
        "# Review each rule (its conditions come from a sample), then move the file under constraints/rules/.\n")
    taken = {str(r.get("id")) for r in schema.parse_toml(old.encode("utf-8"), label).get("rule", [])}
    blocks, index = [], 0
    date = datetime.date.today().isoformat()
    for p in result.proposals:
        if not p.conditions:
            continue
        index += 1
        while f"{family}.proposed-{index}" in taken:  # numbered after the rules the file already holds
            index += 1
        taken.add(f"{family}.proposed-{index}")
        blocks.append(p.rule_text(family, index, result.arch, result.toolchain or (compiler or ""), rev, date))
    if blocks:
        atomic_write(target, (old.rstrip("\n") + "\n\n" + "\n\n".join(blocks) + "\n").encode())
    return len(blocks)


def toolchain_family_for(arch: str, compiler: str | None) -> str:
    """The name of the toolchain family a proposed rule belongs to: that of the compiler verify used."""
    from . import toolchain

    return toolchain.family_for(arch, compiler)
