"""The ckspace process loads OR-Tools' cp_model without pandas (ckspace.imports), and a later `import pandas` still
gets the real package; if the stand-in is not enough, the module loads with the real pandas."""

from __future__ import annotations

import subprocess
import sys
import textwrap


def _run(code: str) -> str:
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.strip()


def test_cp_model_loads_without_pandas_and_solves():
    out = _run("""
        import sys
        from ckspace.imports import lean_cp_model
        lean_cp_model()
        from ortools.sat.python import cp_model
        loaded = "pandas" in sys.modules
        m = cp_model.CpModel()
        x = m.new_int_var(0, 9, "x")
        m.add(x * 3 == 12)
        s = cp_model.CpSolver()
        assert s.solve(m) == cp_model.OPTIMAL
        import pandas
        print(loaded, s.value(x), hasattr(pandas, "DataFrame"))
    """)
    assert out == "False 4 True"


def test_a_stand_in_that_is_not_enough_falls_back_to_the_real_pandas():
    out = _run("""
        import sys, types
        import ckspace.imports as imp
        imp._stand_in = lambda: types.ModuleType("pandas")  # no Index/Series: cp_model's import reads them
        imp.lean_cp_model()
        from ortools.sat.python import cp_model
        print(cp_model.pd.__name__, hasattr(cp_model.pd, "DataFrame"))
    """)
    assert out == "pandas True"
