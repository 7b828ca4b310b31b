"""What real PDFs need of each pypdf safety limit (issue 20): the figures behind ``PdfLimits``.

    python bench/measure_pdf_limits.py [--files GLOB] [DIR ...]

Every limit of ``pypdf.Configuration`` is lifted, pypdf's readers are watched, and each file is
read as the parser reads it (every object of the file, every page's text and its text
positions for table rows). Printed per file and as the largest over all files: the longest
array, the largest dictionary, the most tokens of one content stream (pypdf's parsing budget:
operands, operators, elements of nested arrays), the largest decoded stream, form XObjects
drawn for one page's text, outline entries and depth, page-tree depth and named
destinations; then each figure against the limit ragcli sets (``PdfLimits``) and pypdf's
default. Defaults to ../shared/corpora/pdfs-long and ../shared/corpora/pdfs. Asserts nothing.
"""

from __future__ import annotations

import argparse
import dataclasses
import io
import logging
import sys
import time
from pathlib import Path

from benchlib import CORPORA, ROOT

sys.path[:0] = [str(ROOT)]
FIELDS = ("array", "dict", "stream_tokens", "stream_bytes", "xforms_per_page", "outline_entries",
          "outline_depth", "page_tree_depth", "named_destinations")


class Watch:
    """pypdf's readers wrapped so each reports the size of what it read."""

    def __init__(self) -> None:
        from pypdf import _page, filters
        from pypdf.generic import _data_structures as ds

        self.seen = dict.fromkeys(FIELDS, 0)
        self.budgets: list = []
        self.page_xforms = 0
        seen, budgets, watch = self.seen, self.budgets, self
        array_read, dict_read = ds.ArrayObject.read_from_stream, ds.DictionaryObject.read_from_stream
        decode, xform = filters.decode_stream_data, _page.PageObject.extract_xform_text
        budget_cls = ds.StreamParsingBudget

        def arrays(*a, **k):
            arr = array_read(*a, **k)
            seen["array"] = max(seen["array"], len(arr))
            return arr

        def dicts(*a, **k):
            d = dict_read(*a, **k)
            seen["dict"] = max(seen["dict"], len(d))
            return d

        def decoded(stream):
            data = decode(stream)
            if isinstance(data, (bytes, bytearray)):
                seen["stream_bytes"] = max(seen["stream_bytes"], len(data))
            return data

        def xforms(*a, **k):
            watch.page_xforms += 1
            return xform(*a, **k)

        class Budget(budget_cls):
            def __init__(self, remaining_budget):
                super().__init__(remaining_budget)
                self.start = remaining_budget
                budgets.append(self)

        ds.ArrayObject.read_from_stream = staticmethod(arrays)
        ds.DictionaryObject.read_from_stream = staticmethod(dicts)
        filters.decode_stream_data = decoded
        _page.PageObject.extract_xform_text = xforms
        ds.StreamParsingBudget = Budget

    def settle(self) -> None:
        """Fold the content streams parsed so far into the token figure."""
        for b in self.budgets:
            self.seen["stream_tokens"] = max(self.seen["stream_tokens"], b.start - b.remaining_budget)
        self.budgets.clear()


def unlimited() -> dict:
    from pypdf import Configuration

    big = {}
    for f in dataclasses.fields(Configuration):
        if f.type in (int, "int"):
            big[f.name] = 1 << 40
    return big


def measure(path: Path) -> dict:
    import pypdf
    from pypdf.generic import StreamObject

    from ragcli.ingest import pdf_positions

    watch = Watch()
    t = time.perf_counter()
    with pypdf.apply_configuration(**unlimited()):
        reader = pypdf.PdfReader(io.BytesIO(path.read_bytes()), strict=False)
        if reader.is_encrypted:
            reader.decrypt("")
        for num in range(1, int(reader.trailer.get("/Size", 0))):
            try:
                obj = reader.get_object(num)
                if isinstance(obj, StreamObject):
                    obj.get_data()
            except Exception:  # noqa: BLE001 - a stream pypdf cannot decode (JPX...) says nothing here
                continue
        pages = len(reader.pages)
        for page in reader.pages:
            watch.page_xforms = 0
            page.extract_text()
            try:
                pdf_positions.page_lines(page)
            except Exception:  # noqa: BLE001 - the parser falls back to layout text there
                pass
            watch.seen["xforms_per_page"] = max(watch.seen["xforms_per_page"], watch.page_xforms)
            watch.settle()
        entries, depth = _outline(reader.outline)
        watch.seen.update(outline_entries=entries, outline_depth=depth, page_tree_depth=_tree_depth(reader),
                          named_destinations=len(reader.named_destinations))
    return {"pages": pages, "seconds": time.perf_counter() - t, **watch.seen}


def _outline(items, depth: int = 1) -> tuple[int, int]:
    count, deepest = 0, depth - 1
    for item in items:
        if isinstance(item, list):
            c, d = _outline(item, depth + 1)
            count, deepest = count + c, max(deepest, d)
        else:
            count, deepest = count + 1, max(deepest, depth)
    return count, deepest


def _tree_depth(reader) -> int:
    def depth(node, d: int) -> int:
        kids = node.get("/Kids")
        if kids is None:
            return d
        return max((depth(k.get_object(), d + 1) for k in kids), default=d)

    return depth(reader.trailer["/Root"]["/Pages"].get_object(), 0)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dirs", nargs="*", type=Path, default=[CORPORA / "pdfs-long", CORPORA / "pdfs"])
    ap.add_argument("--files", default="*.pdf")
    opts = ap.parse_args()
    import pypdf

    from ragcli.config import load_config
    from ragcli.ingest.pdf import PdfLimits

    logging.getLogger("pypdf").setLevel(logging.CRITICAL)
    worst = dict.fromkeys(FIELDS, 0)
    where = dict.fromkeys(FIELDS, "")
    print(f"{'file':44s} {'pages':>5s} " + " ".join(f"{f[:12]:>12s}" for f in FIELDS))
    for path in [p for d in opts.dirs for p in sorted(d.glob(opts.files))]:
        try:
            m = measure(path)
        except Exception as exc:  # noqa: BLE001 - damaged or encrypted test files
            print(f"{path.name[:44]:44s} unreadable: {type(exc).__name__}: {str(exc)[:60]}")
            continue
        for f in FIELDS:
            if m[f] > worst[f]:
                worst[f], where[f] = m[f], path.name
        print(f"{path.name[:44]:44s} {m['pages']:5d} " + " ".join(f"{m[f]:12,d}" for f in FIELDS), flush=True)
    limits = PdfLimits(load_config(env={"RAG_HOME": "/nonexistent-ragcli-home"}).parse_memory_mb)
    ours = limits.pypdf_overrides(0)
    default = pypdf.Configuration()
    names = {"array": "array_maximum_element_count", "dict": "dictionary_maximum_element_count",
             "stream_tokens": "stream_parsing_work_maximum_count", "stream_bytes": "zlib_maximum_output_length",
             "xforms_per_page": "xform_maximum_invocations_per_extraction",
             "outline_entries": "outline_maximum_entries", "outline_depth": "outline_maximum_depth",
             "page_tree_depth": "page_tree_maximum_depth", "named_destinations": "named_destinations_maximum_entries"}
    print(f"\npypdf {pypdf.__version__}; largest need over all files, against ragcli's limit and pypdf's default:")
    for f in FIELDS:
        name = names[f]
        limit = ours.get(name, getattr(default, name))
        print(f"  {f:18s} {worst[f]:>12,d}  ({where[f][:40]})  {name} = {limit:,} "
              f"({limit / max(worst[f], 1):,.0f}x), pypdf default {getattr(default, name):,}")


if __name__ == "__main__":
    main()
