"""Writing kernel lists and counts: plain names, CSV, JSON and JSON lines for pipes; rich tables for people."""

from __future__ import annotations

import contextlib
import csv
import json
import sys
from pathlib import Path
from typing import IO, TYPE_CHECKING, Iterable, Iterator, Mapping, Protocol, Sequence

if TYPE_CHECKING:  # pragma: no cover
    from ..space import Stratum


class Derive(Protocol):
    """A kernel's derived quantities (Space.deriver()), and their names in column order."""

    names: list[str]

    def __call__(self, cfg: Mapping[str, object]) -> Mapping[str, object]: ...

FORMATS = ("names", "table", "json", "jsonl", "csv")

# Columns of the human table, in order; the full field list goes to json/jsonl/csv.
TABLE_COLUMNS = ("variant", "ndim", "dtype", "pipeline", "scheduler", "tile", "wave", "warp tile", "vec", "features")


def record(cfg: Mapping[str, object], block_per_cu: object = None) -> dict[str, object]:
    """A kernel as a flat JSON-able record: name first, then every field."""
    out: dict[str, object] = {"name": cfg["name"]}
    out.update((k, v) for k, v in cfg.items() if k != "name")
    if block_per_cu is not None:
        out["block_per_cu"] = block_per_cu
    return out


NAMES_PER_WRITE = 4096  # names are written in batches: one write per batch, and a stream is never held whole


def write_names(rows: Iterable[Mapping[str, object]], out: IO[str]) -> int:
    return write_name_list((r["name"] for r in rows), out)


def write_name_list(names: Iterable[object], out: IO[str]) -> int:
    """One name per line, written in batches; the number written."""
    n = 0
    batch: list[object] = []
    for name in names:
        batch.append(name)
        if len(batch) == NAMES_PER_WRITE:
            out.write("\n".join(batch) + "\n")  # type: ignore[arg-type]
            n += len(batch)
            batch.clear()
    if batch:
        out.write("\n".join(batch) + "\n")  # type: ignore[arg-type]
        n += len(batch)
    return n


def write_jsonl(rows: Iterable[Mapping[str, object]], out: IO[str]) -> int:
    n = 0
    for r in rows:
        out.write(json.dumps(r, separators=(",", ":")) + "\n")
        n += 1
    return n


def write_json(rows: Iterable[Mapping[str, object]], out: IO[str]) -> int:
    """A JSON array, written as it streams (one object per line) so a large result never sits in memory twice."""
    n = 0
    out.write("[")
    for r in rows:
        out.write(("\n" if n == 0 else ",\n") + json.dumps(r, separators=(",", ":")))
        n += 1
    out.write("\n]\n" if n else "]\n")
    return n


def write_csv(rows: Iterable[Mapping[str, object]], out: IO[str], field_names: Iterable[str],
              derived_names: Iterable[str] = ("block_per_cu",)) -> int:
    """CSV with the union of GEMM and depthwise columns (in the data's field order), then the derived quantities; a
    field or quantity the kernel's family does not have is empty."""
    fields = ["name", *field_names]
    fields += [d for d in derived_names if d not in fields]
    writer = csv.DictWriter(out, fieldnames=fields, extrasaction="ignore", lineterminator="\n")
    writer.writeheader()
    n = 0
    for r in rows:
        writer.writerow({k: (int(v) if isinstance(v, bool) else v) for k, v in r.items()})
        n += 1
    return n


def features(cfg: Mapping[str, object]) -> str:
    parts = []
    if cfg.get("num_groups_to_merge", 1) != 1:
        parts.append(f"gm{cfg['num_groups_to_merge']}")
    for flag, label in (("double_smem_buffer", "dsb"), ("two_stage", "2stage"), ("explicit_gemm", "explicit_gemm"),
                        ("split_image", "split_image")):
        if cfg.get(flag):
            parts.append(label)
    if cfg.get("streamk", "none") != "none":
        parts.append(f"streamk_{cfg['streamk']}" + ("_persistent" if cfg.get("streamk_persistent") else ""))
    if cfg.get("specialization", "default") != "default":
        parts.append(str(cfg["specialization"]))
    return " ".join(parts)


def table_row(cfg: Mapping[str, object]) -> list[str]:
    if cfg.get("variant") == "forward_depthwise":
        return [str(cfg["variant"]), f"{cfg['ndim']}d", str(cfg["dtype"]), "depthwise", "",
                f"{cfg['dw_tile_h']}x{cfg['dw_tile_w']}", f"f{cfg['filter_size']} s{cfg['stride_h']}x{cfg['stride_w']}",
                f"sub{cfg['sub_h']}x{cfg['sub_w']} nb{cfg['nbatch']}", f"{cfg['in_vec']}/{cfg['out_vec']}", ""]
    return [
        str(cfg["variant"]), f"{cfg['ndim']}d", str(cfg["dtype"]), str(cfg["pipeline"]), str(cfg["scheduler"]),
        f"{cfg['tile_m']}x{cfg['tile_n']}x{cfg['tile_k']}", f"{cfg['wave_m']}x{cfg['wave_n']}x{cfg['wave_k']}",
        f"{cfg['warp_tile_m']}x{cfg['warp_tile_n']}x{cfg['warp_tile_k']}", f"{cfg['vec_a']}/{cfg['vec_b']}/{cfg['vec_c']}",
        features(cfg),
    ]


NAME_MIN = 44  # the name column's least width: a name folds onto lines of this many characters, never cut
# Which columns stay when not all fit beside the name, most wanted first (the name spells all of them; the shape
# is what a reader scans for)
COLUMN_PRIORITY = ("tile", "wave", "warp tile", "pipeline", "vec", "dtype", "features", "scheduler", "ndim", "variant")


def fit_columns(columns: Sequence[str], cells: Sequence[Sequence[str]], width: int) -> tuple[list[int], int]:
    """Which columns fit `width` beside the name (column 0), in display order, and the name's width. The name gets
    its full length when that fits (else it folds, at NAME_MIN or more); then the other columns are kept, in
    COLUMN_PRIORITY, while each fits whole. A rich table costs 3 characters a column and 1 for its left border."""
    natural = [max([len(col), *(len(c[i]) for c in cells)]) for i, col in enumerate(columns)]
    # The name's wanted width holds 9 names in 10 whole (a few with every feature suffix run to 140 characters:
    # they fold rather than push every column out)
    lengths = sorted(len(c[0]) for c in cells) or [len(columns[0])]
    wanted = max(lengths[(len(lengths) - 1) * 9 // 10], len(columns[0]))
    # It gets that width when it fits, else NAME_MIN (it folds anyway: the room goes to the shape columns)
    name = wanted if 1 + wanted + 3 <= width else min(wanted, NAME_MIN)
    used = 1 + name + 3
    kept = [0]
    rank = {c: i for i, c in enumerate(COLUMN_PRIORITY)}
    for i in sorted(range(1, len(columns)), key=lambda i: rank.get(columns[i], len(rank))):
        if used + natural[i] + 3 <= width:
            kept.append(i)
            used += natural[i] + 3
    return sorted(kept), min(natural[0], name + max(width - used, 0))


def write_table(rows: Iterator[Mapping[str, object]], console, title: str) -> dict[tuple, int]:
    """A rich table of kernels, the name first, followed by counts per (variant, ndim, dtype). It fits the
    console's width: the name folds (never cut) and the columns that do not fit beside it are left out, said in the
    caption."""
    from rich.table import Table

    configs = list(rows)
    columns = ["name", *TABLE_COLUMNS]
    cells = [[str(cfg["name"]), *table_row(cfg)] for cfg in configs]
    kept, name_width = fit_columns(columns, cells, console.width)
    dropped = [c for i, c in enumerate(columns) if i not in kept]
    caption = (f"left out to fit {console.width} columns: {', '.join(dropped)} (a wider terminal, or --format csv, "
               "shows them)") if dropped else None
    table = Table(title=title, show_lines=False, header_style="bold", caption=caption)
    for i in kept:
        if i == 0:
            table.add_column("name", width=name_width, overflow="fold")
        else:
            table.add_column(columns[i], no_wrap=True)
    counts: dict[tuple, int] = {}
    for cfg, row in zip(configs, cells):
        table.add_row(*(row[i] for i in kept))
        key = (cfg["variant"], cfg["ndim"], cfg["dtype"])
        counts[key] = counts.get(key, 0) + 1
    console.print(table)
    return counts


def counts_table(counts: "Mapping[Stratum, int] | Mapping[tuple, int]", title: str,
                 cpp: "Mapping[Stratum, int] | None" = None):
    """Kernels per stratum; with `cpp`, a column of the distinct C++ kernels (the pads count once)."""
    from rich.table import Table

    table = Table(title=title, header_style="bold")
    columns = [("variant", "left"), ("ndim", "right"), ("dtype", "left"), ("kernels", "right")]
    if cpp is not None:
        columns.append(("C++", "right"))
    for col, justify in columns:
        table.add_column(col, justify=justify)  # type: ignore[arg-type]
    total = 0
    for key, n in counts.items():
        v, d, t = (key.variant, key.ndim, key.dtype) if not isinstance(key, tuple) else key
        if n:
            table.add_row(str(v), f"{d}d", str(t), f"{n:,}", *([f"{cpp[key]:,}"] if cpp is not None else []))  # type: ignore[index]
        total += n
    table.add_section()
    table.add_row("total", "", "", f"{total:,}", *([f"{sum(cpp.values()):,}"] if cpp is not None else []),
                  style="bold")
    return table


def counts_records(counts: "Mapping[Stratum, int]", cpp: "Mapping[Stratum, int] | None" = None
                   ) -> list[dict[str, object]]:
    return [{"variant": s.variant, "ndim": s.ndim, "dtype": s.dtype, "count": n,
             **({"cpp": cpp[s]} if cpp is not None else {})} for s, n in counts.items()]


def with_derived(rows: Iterable[Mapping[str, object]], derive: Derive) -> Iterator[dict[str, object]]:
    for r in rows:
        out = dict(r)
        for k, v in derive(r).items():
            out.setdefault(k, v)
        yield out


def write_kernels(fmt: str, rows: Iterable[Mapping[str, object]], out: IO[str], field_names: Iterable[str], *,
                  title: str, counts_title: str, derive: Derive | None = None) -> None:
    """Kernel records in one of FORMATS: names, jsonl, json and csv stream (with the derived quantities when
    `derive` is given); table renders with rich, then the counts per (variant, ndim, dtype)."""
    if derive is not None and fmt in ("json", "jsonl", "csv"):
        rows = with_derived(rows, derive)
    if fmt == "names":
        write_names(rows, out)
    elif fmt == "jsonl":
        write_jsonl(rows, out)
    elif fmt == "json":
        write_json(rows, out)
    elif fmt == "csv":
        write_csv(rows, out, field_names, derive.names if derive is not None else ("block_per_cu",))
    else:
        from .console import console as make_console

        console = make_console(highlight=True, file=out)
        counts = write_table(iter(rows), console, title)
        console.print(counts_table(counts, counts_title))
    out.flush()


def confirm_written(target: Path, fmt: str) -> None:
    """One stderr line saying what -o wrote to a regular file (a device or FIFO is written through, quietly)."""
    import os
    import stat
    import sys

    try:
        if not stat.S_ISREG(os.stat(target).st_mode):
            return
        with open(target, "rb") as fh:
            lines = sum(chunk.count(b"\n") for chunk in iter(lambda: fh.read(1 << 20), b""))
    except OSError:
        return
    print(f"ckspace: wrote {target} ({fmt}, {lines:,} line{'s' if lines != 1 else ''})", file=sys.stderr)


MAX_REJECTED_SHOWN = 3


def report_rejected(space, out=None) -> None:
    """A listed catalog's configs that break a fact of the arch (ckspace.solve.listed): left out, and said so on
    stderr, with a count per rule and a few examples."""
    import sys

    rejected = getattr(space, "rejected", None)
    if not rejected:
        return
    out = out or sys.stderr
    by_rule: dict[str, int] = {}
    for r in rejected:
        by_rule[r.verdict.rule] = by_rule.get(r.verdict.rule, 0) + 1
    rules = ", ".join(f"{rule} {n}" for rule, n in sorted(by_rule.items(), key=lambda kv: (-kv[1], kv[0])))
    catalog = space.catalog.name
    many = len(rejected) != 1
    print(f"ckspace: warning: {catalog}: {len(rejected):,} listed config{'s' if many else ''} break{'' if many else 's'} "
          f"a fact of {space.arch} and {'are' if many else 'is'} left out ({rules}):", file=out)
    for r in rejected[:MAX_REJECTED_SHOWN]:
        print(f"ckspace: warning:   {r.entry.name} ({r.entry.where}): {r.verdict.rule}: {r.verdict.message}",
              file=out)
    if len(rejected) > MAX_REJECTED_SHOWN:
        print(f"ckspace: warning:   ... {len(rejected) - MAX_REJECTED_SHOWN:,} more; `ckspace explain NAME --arch "
              f"{space.arch}` tells each one's rules", file=out)


# -- -o FILE ---------------------------------------------------------------------------------------------------------
# Every file a command writes because the user named it (enumerate's -o FILE and --export-json FILE) goes through
# check_output_file and output_file/written_to, so that each behaves like `> FILE` in a shell, except that a regular
# file is replaced atomically:
# - something that is not a regular file (/dev/null, /dev/full, /dev/stdout, a FIFO, or a symlink to one) is opened
#   and written through, never renamed over; a write error (ENOSPC of /dev/full) is one error line;
# - a regular file (or a symlink to one: its target, the link stays) is replaced by a temporary file in the same
#   directory, renamed onto it only when the run ends well: a failed or interrupted run leaves the old file as it
#   was, and no temporary. The new file keeps the old one's mode and, where the process may, its owner and group;
# - a new file gets the mode `> FILE` would give it: 0o666 less the umask.
OUTPUT_SUFFIXES = {".json": "json", ".jsonl": "jsonl", ".csv": "csv"}


def _stat(path: Path, option: str = "-o"):
    """The status of what the path names (a symlink followed), or None where there is nothing."""
    import os

    try:
        return os.stat(path)
    except FileNotFoundError:
        return None
    except NotADirectoryError:
        return None
    except OSError as exc:
        from ..errors import UsageError

        raise UsageError(f"{_label(path, option)}: cannot write: {exc.strerror or exc}") from None


def _label(path: Path | str, option: str = "-o") -> str:
    return f"{option} {path}"


def _replaced(target: Path) -> Path:
    """The regular file an atomic write replaces: the target itself, or where a symlink (even a dangling one)
    points, so that the link stays a link."""
    import os

    return Path(os.path.realpath(target)) if target.is_symlink() else target


def check_output_file(path: str, option: str = "-o") -> Path:
    """A user-named output FILE, checked before any solving: not a directory; a device or FIFO writable; a regular or
    new file in an existing writable directory (its target's, for a symlink)."""
    import os
    import stat

    from ..errors import UsageError

    if not path.strip():
        name = "-o/--output" if option == "-o" else option
        raise UsageError(f"{name} needs a file name, not an empty string")
    target = Path(path)
    label = _label(path, option)
    st = _stat(target, option)
    if st is not None and stat.S_ISDIR(st.st_mode):
        raise UsageError(f"{label}: a directory; give a file name")
    if st is not None and not stat.S_ISREG(st.st_mode):  # a device or a FIFO: written through
        if not os.access(target, os.W_OK):
            raise UsageError(f"{label}: not writable")
        return target
    if st is not None and not os.access(target, os.W_OK):  # as `> FILE` would: a read-only file stays
        raise UsageError(f"{label}: not writable")
    final = _replaced(target)
    parent = final.parent if str(final.parent) else Path(".")
    if not parent.is_dir():
        raise UsageError(f"{label}: {parent} is not a directory" if os.path.lexists(parent)
                         else f"{label}: no such directory {parent}")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise UsageError(f"{label}: {parent} is not writable")
    return target


def format_for(path: str | None, fmt: str | None) -> str | None:
    """--format, else the format -o FILE's suffix names (.json, .jsonl, .csv; names otherwise)."""
    if fmt or not path:
        return fmt
    return OUTPUT_SUFFIXES.get(Path(path).suffix.lower(), "names")


def _is_write_error(exc: OSError) -> bool:
    """An error of writing the output (a full device or disk, a quota, a pipe without a reader), not of reading some
    input: those name their file."""
    import errno

    codes = {getattr(errno, n) for n in ("ENOSPC", "EDQUOT", "EFBIG", "EIO", "EPIPE", "EROFS") if hasattr(errno, n)}
    return exc.filename is None and exc.errno in codes


def _open_temporary(directory: Path, name: str, mode: int) -> tuple[int, Path]:
    """A new file beside the one it replaces, created with `mode` (less the umask), and its path."""
    import os
    import secrets

    for _ in range(100):
        tmp = directory / f".{name[:40]}.{secrets.token_hex(4)}.tmp"
        try:
            return os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), mode), tmp
        except FileExistsError:
            continue
    raise FileExistsError(f"no free temporary name in {directory}")


@contextlib.contextmanager
def output_file(target: Path, option: str = "-o") -> Iterator[IO[str]]:
    """A text stream into the user-named file `target` (checked by check_output_file), with the behaviour the
    comment above this section sets out. A write error is one UsageError line naming the file."""
    import os
    import stat

    from ..errors import UsageError

    label = _label(target, option)
    st = _stat(target, option)
    if st is not None and not stat.S_ISREG(st.st_mode):  # /dev/null, /dev/full, a FIFO: write through, never rename
        try:
            fd = os.open(target, os.O_WRONLY | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0))
        except OSError as exc:
            raise UsageError(f"{label}: cannot write: {exc.strerror or exc}") from None
        fh = os.fdopen(fd, "w", encoding="utf-8", newline="")
        try:
            yield fh
            fh.flush()
        except OSError as exc:
            _close_quietly(fh)
            if _is_write_error(exc):
                raise UsageError(f"{label}: cannot write: {exc.strerror or exc}") from None
            raise
        except BaseException:
            _close_quietly(fh)
            raise
        try:
            fh.close()
        except OSError as exc:
            raise UsageError(f"{label}: cannot write: {exc.strerror or exc}") from None
        return
    final = _replaced(target)
    parent = final.parent if str(final.parent) else Path(".")
    old = _stat(final, option)
    try:  # an old file's mode is set below; a new one gets 0o666 less the umask, as `> FILE` gives
        fd, tmp = _open_temporary(parent, final.name, 0o600 if old is not None else 0o666)
    except OSError as exc:
        raise UsageError(f"{label}: cannot write: {exc.strerror or exc}") from None
    fh = os.fdopen(fd, "w", encoding="utf-8", newline="")
    written = False  # the block ended well: an OSError from here on is the file's (the close, the rename)
    try:
        if old is not None:
            try:  # the owner first: a change of owner clears the set-id bits the mode then restores
                os.fchown(fd, old.st_uid, old.st_gid)
            except OSError:
                pass  # not permitted (another user's file): the file becomes this user's, as a rewrite makes it
            os.fchmod(fd, stat.S_IMODE(old.st_mode))
        yield fh
        written = True
        fh.close()
        os.replace(tmp, final)
    except BaseException as exc:
        _close_quietly(fh)
        try:
            os.unlink(tmp)
        except OSError:
            pass
        if isinstance(exc, OSError) and (written or _is_write_error(exc)):
            raise UsageError(f"{label}: cannot write: {exc.strerror or exc}") from None
        raise


def _close_quietly(fh: IO[str]) -> None:
    try:
        fh.close()
    except OSError:  # the unwritten buffer of a full device: the error is already being reported
        pass


@contextlib.contextmanager
def written_to(target: Path | None, option: str = "-o"):
    """While open, sys.stdout writes to the user-named file `target` (see output_file): a regular file is replaced
    only when the block ends without an error, a device or FIFO is written through."""
    if target is None:
        yield
        return
    with output_file(target, option) as fh:
        saved, sys.stdout = sys.stdout, fh
        try:
            yield
        finally:
            sys.stdout = saved
