"""One finding of `rag doctor`: what was checked, how it stands, and the fix."""

from __future__ import annotations

from dataclasses import asdict, dataclass

OK, WARN, FAIL = "ok", "warn", "fail"


@dataclass
class Check:
    area: str  # versions, llama.cpp, config, models, index
    name: str
    status: str  # ok | warn | fail
    detail: str
    fix: str = ""
    exit_code: int = 0  # what `rag doctor` exits with when this check fails

    def to_json(self) -> dict:
        return asdict(self)
