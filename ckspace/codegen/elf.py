"""Reading 64-bit little-endian ELF objects without external tools: the header, the sections and the symbol table.

The build's object checks (e_machine, EF_AMDGPU_MACH, the kernel entry points) and verify's kernel descriptors
(`NAME.kd`: the group and private segment sizes) both read objects through `read_elf`.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from pathlib import Path

from ..errors import CkspaceError

SHT_SYMTAB = 2
SHT_NOBITS = 8


@dataclass(frozen=True)
class Symbol:
    name: str
    type: int  # STT_*: 2 is a function
    bind: int  # STB_*
    shndx: int  # the section it is defined in (0: undefined)
    value: int  # its offset in that section (in a relocatable object)


@dataclass(frozen=True)
class Section:
    type: int  # SHT_*
    offset: int  # in the file
    size: int


@dataclass
class ElfInfo:
    machine: int
    flags: int
    etype: int
    symbols: list[Symbol]
    sections: list[Section]
    data: bytes

    def words_at(self, symbol: Symbol, count: int) -> tuple[int, ...]:
        """The first `count` 32-bit words of a symbol's bytes in its section (a defined symbol with contents)."""
        if not 0 < symbol.shndx < len(self.sections) or self.sections[symbol.shndx].type == SHT_NOBITS:
            raise CkspaceError(f"{symbol.name} has no bytes in the object")
        return struct.unpack_from(f"<{count}I", self.data, self.sections[symbol.shndx].offset + symbol.value)


def read_elf(path: str | Path) -> ElfInfo:
    """The header, the sections and the symbol table of a 64-bit little-endian ELF file; a file that is none, or is
    cut short, is one CkspaceError."""
    data = Path(path).read_bytes()
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        raise CkspaceError(f"{path}: not a 64-bit little-endian ELF object")
    try:
        (etype, machine, _version, _entry, _phoff, shoff, flags, _ehsize, _phentsize, _phnum, shentsize, shnum,
         _shstrndx) = struct.unpack_from("<HHIQQQIHHHHHH", data, 16)
        raw = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + k * shentsize) for k in range(shnum)]
        sections = [Section(stype, soff, size) for _n, stype, _f, _a, soff, size, _l, _i, _al, _e in raw]
        symbols: list[Symbol] = []
        for _name, stype, _f, _addr, soff, size, link, _info, _align, entsize in raw:
            if stype != SHT_SYMTAB or not entsize:
                continue
            strtab = sections[link].offset
            for s in range(soff, soff + size, entsize):
                st_name, st_info, _other, shndx, value, _size = struct.unpack_from("<IBBHQQ", data, s)
                end = data.index(b"\0", strtab + st_name)
                symbols.append(Symbol(data[strtab + st_name:end].decode(errors="replace"), st_info & 0xF,
                                      st_info >> 4, shndx, value))
    except (struct.error, ValueError, IndexError) as exc:
        raise CkspaceError(f"{path}: a malformed ELF object ({exc})") from None
    return ElfInfo(machine, flags, etype, symbols, sections, data)
