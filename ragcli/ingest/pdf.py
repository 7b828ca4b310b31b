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
  pages about half as fast (plain extraction to decide, then layout). Instead, a page that
  may hold a table (it draws a grid, or its plain text has a line of figures) gets its table
  rows appended, read by pdfplumber from the drawn cells or from where each word sits
  (pdf_plumber.py) and said as "label — header: value" lines (pdf_ruled.py, pdf_tables.py);
  the plain text stays as it is.

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
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from ..types import Document, Section
from ..words import LIGATURES
from . import pdf_about, pdf_plumber, pdf_tables
from .errors import ParseError
from .pdf_limits import PdfLimits, refusal as _refusal, short as _short

MAX_PAGE_WARNINGS = 5
OUT_OF_MEMORY = "ran out of memory"
_SPACES = re.compile(r"[ \t\u00a0]+$", re.M)
# A dot leader joins a label to its value ("Deposit Fund ........ 6000-6999", a contents line, a
# worksheet's "Add lines 1 and 2 ........ 3"). Left as dots, ". 6000" ended a sentence and parted
# the label from its value, and a line of 170 characters held two words: the FAST Book's fund-group
# ranges were chunked a line or two at a time.
_LEADER = re.compile(r"[ \t]*(?:[.\u2026\u00b7][ \t]?){4,}[ \t]*")


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
    with _capture_pypdf_warnings(warnings), pypdf.apply_configuration(**limits.pypdf_overrides(len(data))):
        try:
            reader = pypdf.PdfReader(io.BytesIO(data), strict=False)
            _decrypt(reader)
            title, meta = _title(reader, path), _metadata(reader)
            pages, skipped = _page_texts(reader, data, warnings, limits, on_page)
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


def _page_texts(reader, data: bytes, warnings: list[str], limits: PdfLimits,
                on_page: Callable[[int, int], None] | None) -> tuple[list[str], list[_Skipped]]:
    """Each page's text ("" for a page skipped) and the pages skipped."""
    from pypdf.errors import LimitReachedError, PyPdfError

    texts: list[str] = []
    tables = pdf_plumber.PageTables(data)
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
        # a ligature as its letters: "classiﬁcation" was no word keyword search or the embedding model
        # knows (MiniLM: cosine 0.61 to "classification"); the table rows were read before, as given
        texts.append(_clean(text).translate(LIGATURES))
        if on_page:
            on_page(n, total)
    tables.close()
    return texts, skipped


def _with_table_rows(page, plain: str, n: int, warnings: list[str], tables: pdf_plumber.PageTables) -> str:
    """The page's plain text, with its table rows said as readable lines after it (see
    pdf_plumber.py) when the page may hold a table. Runs inside the page's alarm and pypdf
    limits; any failure of this step (the alarm included) keeps the plain text already read:
    the rows are extra, the page is not."""
    rows: list[str] = []
    try:
        contents = page.get_contents()
        rows = tables.rows(n, plain, contents.get_data() if contents is not None else b"")
    except PageTimeout:
        warnings.append(f"page {n}: table rows left out: timed out; set parse_timeout to allow longer")
    except MemoryError:
        warnings.append(f"page {n}: table rows left out: {OUT_OF_MEMORY}")
    except Exception as exc:  # noqa: BLE001 - pdfminer fails in ways of its own, on files pypdf reads
        warnings.append(f"page {n}: table rows left out: {_short(exc)}")
    return pdf_tables.append_rows(plain, rows)


@contextmanager
def _alarm(seconds: float | None):
    """Raise PageTimeout in this thread after ``seconds`` (SIGALRM: main thread only; elsewhere,
    or with no seconds, nothing: the worker's watchdog still stands behind it)."""
    if not seconds or threading.current_thread() is not threading.main_thread():
        yield
        return

    def fire(_signum, _frame):
        raise PageTimeout()

    previous = signal.signal(signal.SIGALRM, fire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _clean(text: str) -> str:
    text = text.replace("\x00", "").replace("\r\n", "\n").replace("\r", "\n")
    return _SPACES.sub("", _LEADER.sub(" \u2026 ", text))


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


_OBJECT = re.compile(r"\{.*\}", re.S)  # a PDF object's dictionary, as pypdf prints it


@contextmanager
def _capture_pypdf_warnings(sink: list[str]):
    """Collect pypdf's log warnings into the Document instead of printing them."""

    class Handler(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            if len(sink) < 50:
                # one note per kind: "... in font dictionary {'/BaseFont': '/PQXQEU+MinionPro-Regular',
                # ...}" came once per font, four alike for one handbook
                sink.append("pdf: " + _short(Exception(_OBJECT.sub("{…}", record.getMessage()))))

    logger = logging.getLogger("pypdf")
    handler, propagate = Handler(logging.WARNING), logger.propagate
    logger.addHandler(handler)
    logger.propagate = False
    try:
        yield
    finally:
        logger.removeHandler(handler)
        logger.propagate = propagate
