"""Process start-up: OR-Tools' CP-SAT module without pandas.

`ortools.sat.python.cp_model` imports pandas at module level (0.2 s of a 1 s `enumerate --count`) for its
pandas-indexed helper API (new_int_var_series and the like), which ckspace never calls. The `ckspace` process (only
it: `ckspace.cli.run`, never a library user's process) loads cp_model with a two-class stand-in for pandas
(`Index`, `Series`: what the module reads at import, in type aliases and isinstance checks), and removes the
stand-in again at once, so a later `import pandas` anywhere gets the real package. Should an OR-Tools release read
more of pandas at import, the stand-in steps aside and the module is loaded again with the real pandas: slower,
never wrong.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import sys
import types

CP_MODEL = "ortools.sat.python.cp_model"


def _stand_in() -> types.ModuleType:
    module = types.ModuleType("pandas", "ckspace's stand-in for pandas while OR-Tools' cp_model loads")
    module.Index = type("Index", (), {})  # type: ignore[attr-defined]
    module.Series = type("Series", (), {})  # type: ignore[attr-defined]
    return module


class _CpModelWithoutPandas(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname, path, target=None):  # noqa: ANN001 - importlib's signature
        if fullname != CP_MODEL or "pandas" in sys.modules:
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path, target)
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        real_exec = spec.loader.exec_module

        def exec_module(module: types.ModuleType) -> None:
            stand_in = _stand_in()
            sys.modules["pandas"] = stand_in
            try:
                real_exec(module)
                return
            except AttributeError:  # the module reads more of pandas than the stand-in has: load it for real
                pass
            finally:
                if sys.modules.get("pandas") is stand_in:
                    del sys.modules["pandas"]
            real_exec(module)

        spec.loader.exec_module = exec_module
        return spec


def lean_cp_model() -> None:
    """Load cp_model without pandas in this process (call once, before anything imports OR-Tools)."""
    if CP_MODEL not in sys.modules and not any(isinstance(f, _CpModelWithoutPandas) for f in sys.meta_path):
        sys.meta_path.insert(0, _CpModelWithoutPandas())
