"""Every CP-SAT search of ckspace is set up in one place (ckspace.solve.cpsat: new_solver, LeanModel) and run through
solve_stoppably, in OR-Tools' snake_case API."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from ckspace.solve.cpsat import LeanModel, new_solver, solve_stoppably

PACKAGE = Path(__file__).resolve().parent.parent / "ckspace"


def test_new_solver_fixes_workers_and_seed_and_takes_any_parameter() -> None:
    solver = new_solver(linearization_level=0, max_time_in_seconds=3.0)
    p = solver.parameters
    assert (p.num_workers, p.random_seed, p.linearization_level, p.max_time_in_seconds) == (1, 0, 0, 3.0)
    assert new_solver(workers=2, seed=7).parameters.random_seed == 7
    with pytest.raises(AttributeError):
        new_solver(no_such_parameter=1)


def test_a_solve_gives_the_same_answer_every_run() -> None:
    answers = set()
    for _ in range(3):
        model = LeanModel()
        x = [model.new_int_var(0, 9, f"x{i}") for i in range(3)]
        model.add(sum(x) == 12)
        model.minimize(x[0] - x[1] + 2 * x[2])
        solver = new_solver()
        solve_stoppably(solver, model)
        answers.add(tuple(solver.value(v) for v in x))
    assert len(answers) == 1
    (a, b, c), = answers
    assert a + b + c == 12 and a - b + 2 * c == -6  # the optimum by hand: b = 9, then a + c = 3 with c = 0


def test_no_module_sets_up_cp_sat_by_itself() -> None:
    """CpSolver() and CpModel() appear in cpsat.py only, and no camelCase model or solver call anywhere."""
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.name == "cpsat.py":
            continue
        text = path.read_text(encoding="utf-8")
        assert not re.search(r"\bCpSolver\(\)|\bCpModel\(\)", text), path
        assert not re.search(r"\b(model|solver|cp)\.(New|Add|Minimize|Maximize|Solve|Value|BooleanValue|"
                             r"StatusName|ResponseProto|BestObjectiveBound)\w*\(", text), path
