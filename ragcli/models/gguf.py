"""GGUF validation: magic, a sane header, and a file long enough for the tensor data it declares."""

from __future__ import annotations

import mmap
import os
import struct
from dataclasses import dataclass
from pathlib import Path

from ..errors import ModelError

GGUF_MAGIC = b"GGUF"
_MAX_COUNT = 1 << 24  # tensors or metadata keys; real files have hundreds (vocab is one array)
_MAX_DIMS = 4  # GGML_MAX_DIMS
# GGUF metadata value types -> struct format of the fixed-size ones
_SCALAR_FORMATS = {0: "B", 1: "b", 2: "H", 3: "h", 4: "I", 5: "i", 6: "f", 7: "?",
                   10: "Q", 11: "q", 12: "d"}
_STRING, _ARRAY = 8, 9


class _BadHeader(Exception):
    """The bytes do not form a sane GGUF header (message says what is wrong)."""


@dataclass(frozen=True)
class GGUFInfo:
    """What the header says: enough to know the file is whole and what it holds."""

    metadata: dict[str, object]  # scalar and string values only; arrays are skipped
    required_size: int  # bytes the file must have to hold every tensor
    # name -> (ggml type, dims as GGUF lists them, fastest first, byte offset in the file)
    tensors: dict[str, tuple[int, tuple[int, ...], int]]


class _Reader:
    """Reads little-endian GGUF fields from a buffer, refusing lengths past its end."""

    def __init__(self, buffer: bytes | mmap.mmap):
        self.buffer = buffer
        self.file_size = len(buffer)
        self.pos = 0

    def take(self, n: int) -> bytes | mmap.mmap:
        if n < 0 or self.pos + n > self.file_size:
            raise _BadHeader("header runs past the end of the file (truncated?)")
        start, self.pos = self.pos, self.pos + n
        return self.buffer[start:self.pos]

    def unpack(self, fmt: str):
        return struct.unpack("<" + fmt, self.take(struct.calcsize(fmt)))[0]

    def string(self) -> str:
        return self.take(self.unpack("Q")).decode("utf-8", errors="replace")

    def value(self, vtype: int) -> object:
        if vtype in _SCALAR_FORMATS:
            return self.unpack(_SCALAR_FORMATS[vtype])
        if vtype == _STRING:
            return self.string()
        if vtype == _ARRAY:  # vocabularies: skipped, only their extent is checked
            item_type, count = self.unpack("I"), self.unpack("Q")
            if count > self.file_size:
                raise _BadHeader(f"array of {count} items is longer than the file")
            if item_type in _SCALAR_FORMATS:  # fixed size: skip in one step
                self.take(count * struct.calcsize(_SCALAR_FORMATS[item_type]))
            elif item_type == _STRING:  # a vocabulary: 30k+ lengths, read in place (3x faster)
                pos, length = self.pos, struct.Struct("<Q")
                for _ in range(count):
                    if pos + 8 > self.file_size:
                        raise _BadHeader("header runs past the end of the file (truncated?)")
                    pos += 8 + length.unpack_from(self.buffer, pos)[0]
                self.pos = pos
                if pos > self.file_size:
                    raise _BadHeader("header runs past the end of the file (truncated?)")
            else:
                for _ in range(count):
                    self.value(item_type)
            return None
        raise _BadHeader(f"unknown metadata value type {vtype}")


# ggml type -> (elements per block, bytes per block) for the common types, so checking a
# file does not cost the 0.16 s `import gguf`; rarer types fall back to gguf's table.
_TYPE_SIZES = {0: (1, 4), 1: (1, 2), 2: (32, 18), 3: (32, 20), 6: (32, 22), 7: (32, 24),
               8: (32, 34), 10: (256, 84), 11: (256, 110), 12: (256, 144), 13: (256, 176),
               14: (256, 210), 30: (1, 2)}


def _tensor_nbytes(ggml_type: int, dims: list[int]) -> int:
    if ggml_type in _TYPE_SIZES:
        block, type_size = _TYPE_SIZES[ggml_type]
    else:
        from gguf import GGML_QUANT_SIZES, GGMLQuantizationType

        try:
            block, type_size = GGML_QUANT_SIZES[GGMLQuantizationType(ggml_type)]
        except (ValueError, KeyError):
            raise _BadHeader(f"unknown tensor type {ggml_type}") from None
    n = 1
    for d in dims:
        n *= d
    if dims and dims[0] % block:
        raise _BadHeader("tensor row is not a whole number of quantisation blocks")
    return n // block * type_size


def _parse_header(buffer: bytes | mmap.mmap) -> GGUFInfo:
    r = _Reader(buffer)
    if r.take(4) != GGUF_MAGIC:
        raise _BadHeader("not a GGUF file (no GGUF magic bytes)")
    version = r.unpack("I")
    if version not in (2, 3):
        raise _BadHeader(f"unsupported GGUF version {version}")
    n_tensors, n_kv = r.unpack("Q"), r.unpack("Q")
    if n_tensors > _MAX_COUNT or n_kv > _MAX_COUNT:
        raise _BadHeader(f"implausible header ({n_tensors} tensors, {n_kv} keys)")
    metadata: dict[str, object] = {}
    for _ in range(n_kv):
        key = r.string()
        metadata[key] = r.value(r.unpack("I"))
    alignment = metadata.get("general.alignment", 32)
    if not isinstance(alignment, int) or alignment <= 0 or alignment & (alignment - 1):
        raise _BadHeader(f"bad general.alignment {alignment!r}")
    end = 0
    tensors: dict[str, tuple[int, tuple[int, ...], int]] = {}
    for _ in range(n_tensors):
        name = r.string()
        n_dims = r.unpack("I")
        if not 1 <= n_dims <= _MAX_DIMS:
            raise _BadHeader(f"tensor with {n_dims} dimensions")
        dims = [r.unpack("Q") for _ in range(n_dims)]
        ggml_type, offset = r.unpack("I"), r.unpack("Q")
        if offset % alignment:
            raise _BadHeader("misaligned tensor offset")
        end = max(end, offset + _tensor_nbytes(ggml_type, dims))
        tensors[name] = (ggml_type, tuple(dims), offset)
    data_offset = -(-r.pos // alignment) * alignment  # where tensor data starts
    tensors = {k: (t, dims, data_offset + off) for k, (t, dims, off) in tensors.items()}
    return GGUFInfo(metadata, data_offset + end, tensors)


def _parse_file(path: Path) -> tuple[GGUFInfo, int]:
    with path.open("rb") as handle:
        size = os.fstat(handle.fileno()).st_size
        if size == 0:
            raise _BadHeader("empty file")
        # mmap: the header (vocabulary included) is parsed in place, only its pages are read
        with mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as mapped:
            return _parse_header(mapped), size


def read_gguf_info(path: Path) -> GGUFInfo:
    """Check that ``path`` is a whole, sane GGUF file; raise ModelError saying what is wrong."""
    path = Path(path)
    if not path.exists():
        raise ModelError(f"model file not found: {path}",
                         hint="Check the path, or unset it to use the built-in model.")
    if not path.is_file():
        raise ModelError(f"model path is not a file: {path}", hint="Point it at a .gguf file.")
    try:
        info, size = _parse_file(path)
    except PermissionError:
        raise ModelError(f"model file is not readable: {path}",
                         hint="Fix its permissions (chmod +r) or choose another file.") from None
    except OSError as exc:
        raise ModelError(f"cannot read model file {path}: {exc.strerror or exc}") from None
    except _BadHeader as exc:
        raise ModelError(f"{path}: {exc}",
                         hint="Use a GGUF model file (llama.cpp format).") from None
    if size < info.required_size:
        raise ModelError(
            f"{path}: truncated GGUF ({size} bytes, the header declares {info.required_size})",
            hint="The file is incomplete: copy or download it again.")
    return info

