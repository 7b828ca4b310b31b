"""PDFs → Document with pypdf: one Section per page, lines numbered within the page.

Runs inside the parsing worker (see worker.py), which holds the memory limit and a watchdog;
this module reads page by page, so one bad page costs that page, not the file:

- pypdf's own safety limits (decompressed stream size, tokens per content stream, elements
  of an array or dictionary, ...) are set per parse from ``PdfLimits`` (pdf_limits.py), sized from the
  worker's memory limit rather than pypdf's fixed 75 MB and 100,000 elements (see
  bench/bench_pdfs.py and bench/measure_pdf_limits.py for the measurements behind them);
- a page that trips a limit, takes longer than ``page_timeout`` or runs out of memory is
  skipped with a warning that names the setting to raise; the file fails only when no page
  could be read, with that reason;
- the text of each page is pypdf's plain extraction. Layout mode (table rows kept on one
  line) was tried twice and left out: on every page it moved two-column papers' ranking;
  on table pages only (3+ rows of 3+ cells with a figure, no prose gutter: 26% of the
  chunks) it gained nothing on bench/questions/pdf_tables.jsonl (hybrid hit@5 18/20 both,
  keyword 20/20 both, vector 18 -> 17, on an 801-page subset of pdfs-long) and read
  pages about half as fast (plain extraction to decide, then layout). Instead, a page whose
  plain text looks like a table gets its table rows appended, read from where each string
  sits on the page (pdf_positions.py) and said as "label — header: value" lines
  (pdf_tables.py); the plain text stays as it is.

pypdf's many exceptions become one ParseError with a short reason. pypdf is imported inside
functions: `import ragcli.cli` must not pull it in.
"""

from __future__ import annotations

import logging
import os
import re
import signal
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ..types import Document, Section
from . import pdf_about, pdf_positions, pdf_tables
from .errors import ParseError
from .pdf_limits import PdfLimits, refusal as _refusal, short as _short

MAX_PAGE_WARNINGS = 5
FRUITLESS_TABLE_PAGES = 10
PROBE_EVERY = 10
OUT_OF_MEMORY = "ran out of memory"
_SPACES = re.compile(r"[ \t\u00a0]+$", re.M)


def parse_pdf(path: Path, data: bytes | None = None, limits: PdfLimits | None = None,
              on_page: Callable[[int, int], None] | None = None) -> Document:
    """Parse a PDF (from data if given, else from path). Raise ParseError with the reason.

    ``on_page(done, total)`` is called after each page (the worker's sign of progress)."""
    import io

    import pypdf
    from pypdf.errors import PyPdfError

    path = Path(os.path.abspath(path))
    limits = limits or PdfLimits()
    if data is None:
        data = path.read_bytes()
    warnings: list[str] = []
    capture = _capture_pypdf_warnings(warnings)
    with capture, pypdf.apply_configuration(**limits.pypdf_overrides(len(data))):
        try:
            reader = pypdf.PdfReader(io.BytesIO(data), strict=False)
            _decrypt(reader)
            title, meta = _title(reader, path), _metadata(reader)
            pages, skipped = _page_texts(reader, warnings, capture, limits, on_page)
        except ParseError:
            raise
        except (PyPdfError, ValueError, KeyError, TypeError, AttributeError, IndexError,
                AssertionError, RecursionError, OSError, EOFError, ZeroDivisionError) as exc:
            raise ParseError(_damaged(exc, limits)) from None
    about = pdf_about.read_about(path.stem, meta, pages)
    heading = (title, about.line(title)) if about.line(title) else (title,)
    sections = [Section(heading, text, 1, text.count("\n") + 1, page=n)
                for n, text in enumerate(pages, 1) if text.strip()]
    if not sections:
        if skipped and len(skipped) >= len(pages):
            raise ParseError(skipped[0].reason())
        raise ParseError("no text layer (scanned?)")
    return Document(path=str(path), title=title, sections=sections, tags=about.tags(), date=about.period_end,
                    warnings=_dedupe(warnings)[:MAX_PAGE_WARNINGS + 3])


@dataclass(frozen=True)
class _Skipped:
    """A page that could not be read, and why: ``what`` happened, ``hint`` says what to change."""

    page: int
    kind: str  # "timeout", "refused", "memory", "damaged"
    what: str
    hint: str = ""

    def warning(self) -> str:
        return f"page {self.page} skipped: {self.what}" + (f"; {self.hint}" if self.hint else "")

    def reason(self) -> str:
        """The file's reason when no page could be read."""
        prefix = {"refused": "refused: ", "damaged": "damaged: no page could be read: "}.get(self.kind, "")
        return f"{prefix}{self.what} on page {self.page}" + (f"; {self.hint}" if self.hint else "")


def _decrypt(reader) -> None:
    from pypdf import PasswordType
    from pypdf.errors import DependencyError

    if not reader.is_encrypted:
        return
    try:
        result = reader.decrypt("")
    except DependencyError:
        raise ParseError("encrypted: AES needs the 'cryptography' package (pip install pypdf[crypto])") from None
    except NotImplementedError as exc:
        raise ParseError(f"encrypted: unsupported encryption ({exc})") from None
    if result == PasswordType.NOT_DECRYPTED:
        raise ParseError("encrypted: needs a password")


class PageTimeout(BaseException):
    """Raised by the page alarm. A BaseException, so pypdf's broad ``except Exception`` blocks
    cannot swallow it and carry on with the page."""


def _page_texts(reader, warnings: list[str], capture, limits: PdfLimits,
                on_page: Callable[[int, int], None] | None) -> tuple[list[str], list[_Skipped]]:
    """Each page's text ("" for a page skipped) and the pages skipped."""
    from pypdf.errors import LimitReachedError, PyPdfError

    texts: list[str] = []
    tables = _TableTries()
    skipped: list[_Skipped] = []
    total = len(reader.pages)
    for n, page in enumerate(reader.pages, 1):
        text, skip = "", None
        try:
            with _alarm(limits.page_timeout):
                text = page.extract_text() or ""
                text = _with_table_rows(page, _clean(text), n, warnings, tables)
        except PageTimeout:
            skip = _Skipped(n, "timeout", f"timed out after {limits.page_timeout:g}s",
                            "set parse_timeout to allow longer")
        except LimitReachedError as exc:
            skip = _Skipped(n, "refused", *_refusal(exc, limits))
        except MemoryError:
            skip = _Skipped(n, "memory", f"{OUT_OF_MEMORY} (limit {limits.memory_mb} MB)",
                            "set parse_memory_mb to raise it")
        except RecursionError:
            skip = _Skipped(n, "damaged", "nesting too deep")
        except (PyPdfError, ValueError, KeyError, TypeError, AttributeError, IndexError,
                AssertionError, ZeroDivisionError) as exc:
            skip = _Skipped(n, "damaged", f"text could not be read ({_short(exc)})")
        if skip:
            skipped.append(skip)
            warnings.append(skip.warning())
        texts.append(_clean(text))
        for m in tables.take_passed():  # a probe found rows: the pages passed over before it
            texts[m - 1] = _clean(_with_rows_again(reader.pages[m - 1], texts[m - 1], m, warnings, limits))
        if on_page:
            on_page(n, total)
    return texts, skipped


class _TableTries:
    """Reading a page's text positions costs up to ~0.9 s a page (IRS tax tables), and a file
    whose tables cannot be lined up gives no rows on most pages: after
    ``FRUITLESS_TABLE_PAGES`` tabular-looking pages in a row without a row, only every
    ``PROBE_EVERY``-th tabular-looking page is tried, and a row found there resumes trying
    every page, and the pages passed over since the last probe are tried after all. The IRS
    1040 instructions have 23 such pages (worksheets, EIC tables) before their tax tables
    (pages 80-107): a plain give-up never reached them, a probe does (page 83, then 80-82),
    for a tenth of the cost of trying every page."""

    def __init__(self) -> None:
        self.fruitless = 0
        self.passed: list[int] = []  # tabular-looking pages passed over since the last probe
        self._found_after: list[int] = []  # the passed pages of a probe that found rows

    def worth_it(self, n: int) -> bool:
        """Whether to read the rows of tabular-looking page ``n`` now."""
        if self.fruitless < FRUITLESS_TABLE_PAGES or len(self.passed) + 1 >= PROBE_EVERY:
            return True
        self.passed.append(n)
        return False

    def record(self, rows: list[str]) -> list[str]:
        if rows:
            self.fruitless = 0
            self._found_after = self.passed
        else:
            self.fruitless += 1
        self.passed = []
        return rows

    def take_passed(self) -> list[int]:
        """The pages to try after all, once: those passed over before a probe that found rows."""
        pages, self._found_after = self._found_after, []
        return pages


def _with_table_rows(page, plain: str, n: int, warnings: list[str], tries: _TableTries) -> str:
    """The page's plain text, with its table rows said as readable lines after it (see
    pdf_tables.py) when the plain text looks like it holds a table. Runs inside the page's
    alarm and pypdf limits; any failure of this step (the alarm included) keeps the plain
    text already read: the rows are extra, the page is not."""
    if not pdf_tables.looks_tabular(plain) or not tries.worth_it(n):
        return plain
    return pdf_tables.append_rows(plain, tries.record(_rows_or_none(page, n, warnings)))


def _with_rows_again(page, plain: str, n: int, warnings: list[str], limits: PdfLimits) -> str:
    """A page passed over, its rows tried after all (under its own alarm)."""
    rows: list[str] = []
    try:
        with _alarm(limits.page_timeout):
            rows = _rows_or_none(page, n, warnings)
    except PageTimeout:  # the alarm went off between the step's own handlers
        warnings.append(f"page {n}: table rows left out: timed out; set parse_timeout to allow longer")
    return pdf_tables.append_rows(plain, rows)


def _rows_or_none(page, n: int, warnings: list[str]) -> list[str]:
    try:
        return _table_rows(page)
    except PageTimeout:
        warnings.append(f"page {n}: table rows left out: timed out; set parse_timeout to allow longer")
    except MemoryError:
        warnings.append(f"page {n}: table rows left out: {OUT_OF_MEMORY}")
    except Exception:  # noqa: BLE001 - reading positions or layout text fails in ways of its own (limits included)
        pass
    return []


def _table_rows(page) -> list[str]:
    """Rows read from where each string sits on the page (pdf_positions). On the 21 long PDFs
    this gave every row layout text gave, and rows on pages where layout text lets the
    header drift off its columns (OPM FY 2016, the IRS tax tables), at the same cost; so
    layout text is read only when the positions cannot be (a pypdf whose internals moved)."""
    try:
        lines = pdf_positions.page_lines(page)
    except MemoryError:
        raise
    except Exception:  # noqa: BLE001 - pypdf internals (see pdf_positions), or a page they cannot read
        return pdf_tables.table_rows(_clean(page.extract_text(extraction_mode="layout") or ""))
    return pdf_tables.rows_in_lines(lines)


class _alarm:
    """Raise PageTimeout in this thread after ``seconds`` (SIGALRM: main thread only; elsewhere,
    or with no seconds, nothing: the worker's watchdog still stands behind it)."""

    def __init__(self, seconds: float | None):
        self.seconds = seconds if seconds and threading.current_thread() is threading.main_thread() else None

    def __enter__(self):
        if self.seconds:
            self.previous = signal.signal(signal.SIGALRM, self._fire)
            signal.setitimer(signal.ITIMER_REAL, self.seconds)
        return self

    @staticmethod
    def _fire(_signum, _frame):
        raise PageTimeout()

    def __exit__(self, *exc) -> None:
        if self.seconds:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, self.previous)


def _clean(text: str) -> str:
    text = text.replace("\x00", "").replace("\r\n", "\n").replace("\r", "\n")
    return _SPACES.sub("", text)


def _title(reader, path: Path) -> str:
    try:
        meta = reader.metadata
        title = (meta.title if meta else None) or ""
    except Exception:  # noqa: BLE001 - metadata is optional; a broken info dictionary must not fail the file
        title = ""
    title = " ".join(str(title).split())
    if _sensible_title(title):
        return title
    return path.stem


def _metadata(reader) -> dict[str, str]:
    """Title, subject and author from the info dictionary, as plain text ("" where absent)."""
    try:
        meta = reader.metadata or {}
        return {k: " ".join(str(meta.get(f"/{k.title()}") or "").split()) for k in ("title", "subject", "author")}
    except Exception:  # noqa: BLE001 - a broken info dictionary must not fail the file
        return {}


def _sensible_title(title: str) -> bool:
    if not (3 <= len(title) <= 200) or sum(c.isalpha() for c in title) < 3:
        return False
    lowered = title.lower()
    if lowered in ("untitled", "title", "document", "slide 1") or lowered.startswith("microsoft word - "):
        return False
    return not re.search(r"\.(docx?|pdf|tex|dvi|indd|pptx?)$", lowered)


def _damaged(exc: BaseException, limits: PdfLimits) -> str:
    from pypdf.errors import EmptyFileError, FileNotDecryptedError, LimitReachedError

    if isinstance(exc, EmptyFileError):
        return "empty file"
    if isinstance(exc, FileNotDecryptedError):
        return "encrypted: needs a password"
    if isinstance(exc, LimitReachedError):
        what, hint = _refusal(exc, limits)
        return f"refused: {what}" + (f"; {hint}" if hint else "")
    if isinstance(exc, RecursionError):
        return "damaged: nesting too deep"
    return f"damaged: {_short(exc)}"


def _dedupe(items: list[str]) -> list[str]:
    return list(dict.fromkeys(items))


class _capture_pypdf_warnings:
    """Collect pypdf's log warnings into the Document instead of printing them. Layout mode's
    own notes (rotated text) go to ``layout_warnings``: pdf_layout acts on them."""

    def __init__(self, sink: list[str]):
        self.sink = sink
        self.layout_warnings: list[str] = []
        self.logger = logging.getLogger("pypdf")

    def __enter__(self):
        sink, layout = self.sink, self.layout_warnings

        class Handler(logging.Handler):
            def emit(self, record: logging.LogRecord) -> None:
                message = record.getMessage()
                if "_layout_mode" in record.name or message.startswith("Rotated text"):
                    if len(layout) < 1000:
                        layout.append(message)
                elif len(sink) < 50:
                    sink.append("pdf: " + _short(Exception(message)))

        self.handler = Handler(logging.WARNING)
        self.previous = (self.logger.propagate, self.logger.level)
        self.logger.addHandler(self.handler)
        self.logger.propagate = False
        return self

    def __exit__(self, *exc) -> None:
        self.logger.removeHandler(self.handler)
        self.logger.propagate, _ = self.previous
