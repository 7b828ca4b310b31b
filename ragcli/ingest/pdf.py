"""PDFs → Document with pypdf: one Section per page, lines numbered within the page.

Runs inside the parsing worker (see worker.py), which holds the time and memory limits;
this module only turns pypdf's many exceptions into one ParseError with a short reason.
pypdf is imported inside functions: `import ragcli.cli` must not pull it in.
"""

from __future__ import annotations

import logging
import os
import re
from pathlib import Path

from ..types import Document, Section
from .errors import ParseError

MAX_PAGE_WARNINGS = 5
_SPACES = re.compile(r"[ \t\u00a0]+$", re.M)


def parse_pdf(path: Path, data: bytes | None = None) -> Document:
    """Parse a PDF (from data if given, else from path). Raise ParseError with the reason."""
    import io

    import pypdf
    from pypdf.errors import PyPdfError

    path = Path(os.path.abspath(path))
    warnings: list[str] = []
    with _capture_pypdf_warnings(warnings):
        try:
            reader = pypdf.PdfReader(io.BytesIO(data) if data is not None else str(path), strict=False)
            _decrypt(reader)
            pages = _page_texts(reader, warnings)
            title = _title(reader, path)
        except ParseError:
            raise
        except (PyPdfError, ValueError, KeyError, TypeError, AttributeError, IndexError,
                AssertionError, RecursionError, OSError, EOFError, ZeroDivisionError) as exc:
            raise ParseError(_damaged(exc)) from None
    sections = [Section((title,), text, 1, text.count("\n") + 1, page=n)
                for n, text in enumerate(pages, 1) if text.strip()]
    if not sections:
        failed = [w for w in warnings if w.startswith("page ")]
        if failed and len(failed) >= len(pages):
            raise ParseError(f"damaged: no page could be read ({failed[0]})")
        raise ParseError("no text layer (scanned?)")
    return Document(path=str(path), title=title, sections=sections,
                    warnings=_dedupe(warnings)[:MAX_PAGE_WARNINGS + 3])


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


def _page_texts(reader, warnings: list[str]) -> list[str]:
    from pypdf.errors import LimitReachedError, PyPdfError

    texts = []
    for n, page in enumerate(reader.pages, 1):
        try:
            text = page.extract_text() or ""
        except LimitReachedError as exc:
            raise ParseError(f"refused: a stream is too large to decompress ({_short(exc)})") from None
        except (PyPdfError, ValueError, KeyError, TypeError, AttributeError, IndexError,
                AssertionError, ZeroDivisionError) as exc:
            warnings.append(f"page {n}: text could not be read ({_short(exc)})")
            text = ""
        texts.append(_clean(text))
    return texts


def _clean(text: str) -> str:
    text = text.replace("\x00", "").replace("\r\n", "\n").replace("\r", "\n")
    return _SPACES.sub("", text)


def _title(reader, path: Path) -> str:
    try:
        meta = reader.metadata
        title = (meta.title if meta else None) or ""
    except Exception:  # metadata is optional; a broken info dictionary must not fail the file
        title = ""
    title = " ".join(str(title).split())
    if _sensible_title(title):
        return title
    return path.stem


def _sensible_title(title: str) -> bool:
    if not (3 <= len(title) <= 200) or sum(c.isalpha() for c in title) < 3:
        return False
    lowered = title.lower()
    if lowered in ("untitled", "title", "document", "slide 1") or lowered.startswith("microsoft word - "):
        return False
    return not re.search(r"\.(docx?|pdf|tex|dvi|indd|pptx?)$", lowered)


def _damaged(exc: BaseException) -> str:
    from pypdf.errors import EmptyFileError, FileNotDecryptedError, LimitReachedError

    if isinstance(exc, EmptyFileError):
        return "empty file"
    if isinstance(exc, FileNotDecryptedError):
        return "encrypted: needs a password"
    if isinstance(exc, LimitReachedError):
        return f"refused: a stream is too large to decompress ({_short(exc)})"
    if isinstance(exc, RecursionError):
        return "damaged: nesting too deep"
    return f"damaged: {_short(exc)}"


def _short(exc: BaseException) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text[:120] + ("…" if len(text) > 120 else "")


def _dedupe(items: list[str]) -> list[str]:
    return list(dict.fromkeys(items))


class _capture_pypdf_warnings:
    """Collect pypdf's log warnings into the Document instead of printing them."""

    def __init__(self, sink: list[str]):
        self.sink = sink
        self.logger = logging.getLogger("pypdf")

    def __enter__(self):
        sink = self.sink

        class Handler(logging.Handler):
            def emit(self, record: logging.LogRecord) -> None:
                if len(sink) < 50:
                    sink.append("pdf: " + _short(Exception(record.getMessage())))

        self.handler = Handler(logging.WARNING)
        self.previous = (self.logger.propagate, self.logger.level)
        self.logger.addHandler(self.handler)
        self.logger.propagate = False
        return self

    def __exit__(self, *exc) -> None:
        self.logger.removeHandler(self.handler)
        self.logger.propagate, _ = self.previous
