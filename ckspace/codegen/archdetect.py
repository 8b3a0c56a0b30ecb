"""`--arch auto`: the gfx name of the local AMD GPU, read through hip-python (the optional extra `ckspace[hip]`).

Without hip-python, without a ROCm runtime, or without an AMD GPU, `detect()` raises a UsageError of one line that
says which and asks for `--arch` (exit 2).
"""

from __future__ import annotations

from typing import overload

from ..errors import UsageError

ASK = "pass --arch (gfx90a, gfx942, gfx950, gfx1100, gfx1200, gfx1201, gfx1250)"


def _hip():
    try:
        from hip import hip
    except ImportError:
        raise UsageError(f"--arch auto needs hip-python (pip install 'ckspace[hip]') and a ROCm runtime; {ASK}") from None
    except Exception as exc:  # hip-python present but the ROCm runtime library is not (OSError from the loader)
        raise UsageError(f"--arch auto: no ROCm runtime ({type(exc).__name__}: {str(exc).splitlines()[0][:120]}); {ASK}") from None
    return hip


def _check(result):
    """hip-python returns (hipError_t, value...) tuples; raise on an error code."""
    if isinstance(result, tuple):
        err, *values = result
    else:
        err, values = result, []
    code = getattr(err, "value", err)
    if code not in (0, None):
        name = getattr(err, "name", str(err))
        raise UsageError(f"--arch auto: the ROCm runtime reports {name} (no usable AMD GPU?); {ASK}")
    return values[0] if len(values) == 1 else values


def gfx_name(arch_name: str | bytes) -> str:
    """`gfx942:sramecc+:xnack-` -> `gfx942`."""
    if isinstance(arch_name, bytes):
        arch_name = arch_name.decode(errors="replace")
    return arch_name.strip().split(":")[0].strip("\x00 ")


def detect(device: int = 0) -> str:
    """The gfx name of GPU `device` (default the first)."""
    hip = _hip()
    try:
        count = _check(hip.hipGetDeviceCount())
    except UsageError:
        raise
    except Exception as exc:  # hip-python loads libamdhip64.so on first use: RuntimeError "failed to dlopen"
        if "dlopen" in str(exc) or "libamdhip64" in str(exc):
            raise UsageError(f"--arch auto: no ROCm runtime (libamdhip64.so cannot be loaded); {ASK}") from None
        raise UsageError(f"--arch auto: cannot query the ROCm runtime ({type(exc).__name__}); {ASK}") from None
    if not count:
        raise UsageError(f"--arch auto: the ROCm runtime sees no AMD GPU; {ASK}")
    try:
        props = hip.hipDeviceProp_t()
        _check(hip.hipGetDeviceProperties(props, device))
        name = gfx_name(props.gcnArchName)
    except UsageError:
        raise
    except Exception as exc:
        raise UsageError(f"--arch auto: cannot read the GPU's properties ({type(exc).__name__}); {ASK}") from None
    if not name.startswith("gfx"):
        raise UsageError(f"--arch auto: the GPU reports arch {name!r}, not a gfx name; {ASK}")
    return name


@overload
def resolve(arch: str) -> str: ...


@overload
def resolve(arch: None) -> None: ...


def resolve(arch: str | None) -> str | None:
    """`auto` -> the local GPU's gfx name; anything else unchanged."""
    return detect() if arch == "auto" else arch
