"""The binary container of circom and snarkjs files (.r1cs, .wtns, .zkey), memory-mapped.

A file is a 4-byte magic, a u32 LE version, a u32 LE section count, then sections, each a u32 LE
id, a u64 LE size and that many bytes. Sections may come in any order and an id may repeat
(snarkjs reads the ones it needs as unique). Every error names the file and what is wrong.
"""

from __future__ import annotations

from pathlib import Path

import attrs
import numpy as np

from cuzk_core.errors import FormatError
from cuzk_core.fileio import map_input

_PREAMBLE = 12
_SECTION_HEADER = 12


@attrs.frozen
class Section:
    """Where one section's data lies in the file."""

    id: int
    offset: int
    size: int


class Container:
    """A checked section table over a memory-mapped file: magic, version and section bounds."""

    def __init__(self, path: str | Path, magic: bytes, max_version: int, kind: str) -> None:
        self.path = Path(path)
        self.kind = kind
        self.data = map_input(self.path)
        size = len(self.data)
        if size < _PREAMBLE:
            raise FormatError(f"{self.path}: truncated: {size} bytes, not a {kind} file")
        found = self.data[:4].tobytes()
        if found != magic:
            raise FormatError(
                f"{self.path}: not a {kind} file (magic {found!r}, expected {magic!r})"
            )
        self.version = int(self.data[4:8].view("<u4")[0])
        if not 1 <= self.version <= max_version:
            raise FormatError(
                f"{self.path}: {kind} version {self.version} is not supported (1 to {max_version})"
            )
        count = int(self.data[8:12].view("<u4")[0])
        self.sections: dict[int, list[Section]] = {}
        offset = _PREAMBLE
        for index in range(count):
            if offset + _SECTION_HEADER > size:
                raise FormatError(
                    f"{self.path}: truncated: the header of section {index + 1} of {count} "
                    f"at offset {offset} runs past the end ({size} bytes)"
                )
            section_id = int(self.data[offset : offset + 4].view("<u4")[0])
            length = int(self.data[offset + 4 : offset + 12].view("<u8")[0])
            start = offset + _SECTION_HEADER
            if length > size - start:
                raise FormatError(
                    f"{self.path}: truncated or corrupt: section {section_id} claims {length} "
                    f"bytes at offset {start}, the file ends at {size}"
                )
            self.sections.setdefault(section_id, []).append(Section(section_id, start, length))
            offset = start + length
        if offset != size:
            raise FormatError(f"{self.path}: {size - offset} unexpected bytes after the sections")

    def has(self, section_id: int) -> bool:
        """Whether the file holds a section with this id."""
        return section_id in self.sections

    def reader(self, section_id: int, what: str) -> SectionReader:
        """A cursor over the one section ``section_id`` (``what`` names it in errors)."""
        found = self.sections.get(section_id, [])
        if not found:
            raise FormatError(f"{self.path}: missing section {section_id} ({what})")
        if len(found) > 1:
            raise FormatError(f"{self.path}: section {section_id} ({what}) appears {len(found)}×")
        section = found[0]
        data = self.data[section.offset : section.offset + section.size]
        return SectionReader(self.path, section_id, what, data)


class SectionReader:
    """Reads fields from one section in order, each read checked against the section's end."""

    def __init__(self, path: Path, section_id: int, what: str, data: np.ndarray) -> None:
        self.path = path
        self.label = f"section {section_id} ({what})"
        self.data = data
        self.offset = 0

    @property
    def remaining(self) -> int:
        """Bytes not yet read."""
        return len(self.data) - self.offset

    def error(self, message: str) -> FormatError:
        """A FormatError naming the file and this section."""
        return FormatError(f"{self.path}: {self.label}: {message}")

    def take(self, size: int, what: str) -> np.ndarray:
        """The next ``size`` bytes as a uint8 view."""
        if size > self.remaining:
            raise self.error(
                f"{what} needs {size} bytes at offset {self.offset}, only {self.remaining} remain"
            )
        chunk = self.data[self.offset : self.offset + size]
        self.offset += size
        return chunk

    def u32(self, what: str) -> int:
        """A little-endian u32."""
        return int(self.take(4, what).view("<u4")[0])

    def u64(self, what: str) -> int:
        """A little-endian u64."""
        return int(self.take(8, what).view("<u8")[0])

    def integer(self, size: int, what: str) -> int:
        """A little-endian unsigned integer of ``size`` bytes."""
        return int.from_bytes(self.take(size, what).tobytes(), "little")

    def records(self, count: int, size: int, what: str) -> np.ndarray:
        """``count`` fixed-size records as a ``(count, size)`` uint8 view."""
        return self.take(count * size, f"{what} ({count} × {size} bytes)").reshape(count, size)

    def finish(self) -> None:
        """Check that the whole section was read."""
        if self.remaining:
            raise self.error(f"{self.remaining} unexpected bytes at the end")
