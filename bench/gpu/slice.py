"""Copy the first N notes (sorted paths, as bench_gpu takes them) of SRC to DST."""
import shutil
import sys
from pathlib import Path

src, dst, n = Path(sys.argv[1]), Path(sys.argv[2]), int(sys.argv[3])
for p in sorted(src.rglob("*.md"))[:n]:
    target = dst / p.relative_to(src)
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(p, target)
