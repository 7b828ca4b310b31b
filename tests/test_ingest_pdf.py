"""PDFs through the parsing worker: real papers, tricky files, and hostile files made here."""

from __future__ import annotations

import dataclasses
import json
import zlib
from pathlib import Path

import pytest

from ragcli.config import load_config
from ragcli.ingest import ParseError, Parser

from conftest import PDFS  # the path as reached (../shared may be a symlink)
from helpers import ok, rag
needs_pdfs = pytest.mark.skipif(not PDFS.is_dir(), reason="../shared/corpora is not present")
PAPERS = ["1910.13461v1_bart_lewis2019.pdf", "2004.04906v3_dpr_karpukhin2020.pdf",
          "2005.11401v4_rag_lewis2020.pdf", "2104.08663v4_beir_thakur2021.pdf"]


def make_pdf(pages: list[bytes], flate: bool = False, title: str | None = None) -> bytes:
    """A minimal valid PDF: one Helvetica font, one content stream per page."""
    objs = [b"<< /Type /Catalog /Pages 2 0 R >>",
            f"<< /Type /Pages /Kids [{' '.join(f'{4 + 2 * i} 0 R' for i in range(len(pages)))}] "
            f"/Count {len(pages)} >>".encode(),
            b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"]
    for i, content in enumerate(pages):
        objs.append(f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font "
                    f"<< /F1 3 0 R >> >> /Contents {5 + 2 * i} 0 R >>".encode())
        head = b"<< /Length %d%s >>" % (len(content), b" /Filter /FlateDecode" if flate else b"")
        objs.append(head + b"\nstream\n" + content + b"\nendstream")
    if title:
        objs.append(f"<< /Title ({title}) >>".encode())
    out, offsets = bytearray(b"%PDF-1.4\n"), []
    for k, body in enumerate(objs, 1):
        offsets.append(len(out))
        out += f"{k} 0 obj\n".encode() + body + b"\nendobj\n"
    xref = len(out)
    out += f"xref\n0 {len(objs) + 1}\n0000000000 65535 f \n".encode()
    out += b"".join(f"{off:010d} 00000 n \n".encode() for off in offsets)
    info = f" /Info {len(objs)} 0 R" if title else ""
    out += f"trailer\n<< /Size {len(objs) + 1} /Root 1 0 R{info} >>\nstartxref\n{xref}\n%%EOF\n".encode()
    return bytes(out)


def text_page(*lines: str) -> bytes:
    return b"\n".join([b"BT /F1 12 Tf 72 720 Td 14 TL"] + [f"({line}) Tj T*".encode() for line in lines]
                      + [b"ET"])


def inflating_to(gigabytes: int) -> bytes:
    """A zlib stream of a few MB that inflates to `gigabytes` GB: full-flush blocks repeated."""
    zeros = b"0" * (16 << 20)
    comp = zlib.compressobj(9)
    first = comp.compress(zeros) + comp.flush(zlib.Z_FULL_FLUSH)
    block = comp.compress(zeros) + comp.flush(zlib.Z_FULL_FLUSH)  # independent of what came before
    n = gigabytes * 64
    return first + block * (n - 1) + b"\x03\x00" + b"\x00\x00\x00\x01"  # final block, bad adler


@pytest.fixture
def parser():
    with Parser(load_config()) as p:
        yield p


def _reason(parser: Parser, path: Path) -> str:
    with pytest.raises(ParseError) as info:
        parser.parse(path)
    return str(info.value)


def test_made_pdf_pages_and_title(tmp_path: Path, parser: Parser) -> None:
    path = tmp_path / "made.pdf"
    path.write_bytes(make_pdf([text_page("Alpha line", "Beta line"), text_page("Gamma page two")],
                              title="A Sensible Title"))
    doc = parser.parse(path)
    assert doc.title == "A Sensible Title"
    assert [s.page for s in doc.sections] == [1, 2]
    assert "Alpha line\nBeta line" in doc.sections[0].text and doc.sections[0].line_start == 1
    assert "Gamma" in doc.sections[1].text


@needs_pdfs
@pytest.mark.parametrize("name", PAPERS)
def test_real_papers_parse_with_pages(parser: Parser, name: str) -> None:
    doc = parser.parse(PDFS / name)
    pages = [s.page for s in doc.sections]
    assert pages == sorted(pages) and pages[0] == 1 and len(pages) >= 9
    assert sum(len(s.text) for s in doc.sections) > 30_000
    assert doc.title == Path(name).stem  # these papers carry no metadata title


@needs_pdfs
def test_a_typeset_papers_ligatures_are_read_as_their_letters(tmp_path: Path, parser: Parser) -> None:
    """BART's paper prints "fi" and "fl" as one glyph each (88 of them in its 10 pages): read as
    such, "classiﬁcation" was a word neither keyword search nor the embedding model knows, and
    `rag search --mode keyword "classification problems"` found nothing of the page about it."""
    doc = parser.parse(PDFS / "1910.13461v1_bart_lewis2019.pdf")
    text = "\n".join(s.text for s in doc.sections)
    assert not [c for c in text if "\ufb00" <= c <= "\ufb06"]
    assert "classification problems" in text and "fine-tuning" in text
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "bart.pdf").write_bytes((PDFS / "1910.13461v1_bart_lewis2019.pdf").read_bytes())
    home = tmp_path / "home"
    ok(rag("index", notes, home=home))
    hits = json.loads(ok(rag("search", "--mode", "keyword", "--json", "classification problems", home=home)).stdout)
    assert hits["results"] and "classification problems" in hits["results"][0]["text"]


@pytest.mark.skipif(not (PDFS.parent / "pdfs-long").is_dir(), reason="../shared/corpora is not present")
def test_a_cff_fonts_symbols_are_read_as_printed() -> None:
    """The EMTG design document sets its formulas in CFF fonts, whose encodings pypdf reads with
    fontTools (pypdf[fonts]); without it, "∂" was read as "@" and "/" as "=" on 14 of 80 pages, and
    every such file gave the note "fontTools is required to fully parse the encoding ..."."""
    from ragcli.ingest.pdf import parse_pdf

    doc = parse_pdf(PDFS.parent / "pdfs-long" / "nasa_emtg_v9_software_design_document.pdf")
    assert "∂" in "\n".join(s.text for s in doc.sections)
    assert not [w for w in doc.warnings if "fontTools" in w], doc.warnings


@needs_pdfs
def test_tricky_pdfs_give_reasons(parser: Parser) -> None:
    assert _reason(parser, PDFS / "tricky_encrypted_userpassword.pdf") == "encrypted: needs a password"
    assert _reason(parser, PDFS / "tricky_scanned_no_text_layer.pdf") == "no text layer (scanned?)"
    assert _reason(parser, PDFS / "tricky_malformed_xref.pdf").startswith("damaged:")
    aes = parser.parse(PDFS / "tricky_encrypted_aes256_emptyuserpw.pdf")
    assert "Placeholder" in aes.sections[0].text
    assert parser.worker.started == 1  # one worker served them all


def test_hostile_pdfs(tmp_path: Path, parser: Parser) -> None:
    good = tmp_path / "good.pdf"
    good.write_bytes(make_pdf([text_page("still fine")]))
    (tmp_path / "empty.pdf").write_bytes(b"")
    (tmp_path / "truncated.pdf").write_bytes(make_pdf([text_page("cut")])[:150])
    (tmp_path / "garbage.pdf").write_bytes(b"%PDF-1.4\n" + bytes(range(256)) * 40)
    (tmp_path / "bomb.pdf").write_bytes(make_pdf([inflating_to(1)], flate=True))
    assert (tmp_path / "bomb.pdf").stat().st_size < 20 << 20
    assert _reason(parser, tmp_path / "empty.pdf") == "empty file"
    for name in ("truncated.pdf", "garbage.pdf"):
        with pytest.raises(ParseError) as info:
            parser.parse(tmp_path / name)
        assert len(str(info.value)) < 200
    bomb = _reason(parser, tmp_path / "bomb.pdf")
    assert bomb.startswith("refused: a stream is too large to decompress") and "parse_memory_mb" in bomb
    assert parser.parse(good).sections[0].text.startswith("still fine")


def honest_big_stream(megabytes: int = 80) -> bytes:
    """A scanned page with its text layer, whose image sits inline in the content stream (as
    some scanners write it): the stream inflates past pypdf's default 75 MB, honestly."""
    side = int((megabytes << 20) ** 0.5)
    pixels = (bytes(range(256)) * (side * side // 256 + 1))[: side * side].replace(b"EI", b"E.")
    content = (b"BT /F1 12 Tf 72 720 Td (Scanned minutes of the harbour board) Tj ET\n"
               b"q 612 0 0 792 0 0 cm\nBI /W %d /H %d /BPC 8 /CS /G ID\n" % (side, side) + pixels
               + b"\nEI Q\nBT /F1 12 Tf 72 700 Td (Text after the inline image) Tj ET")
    return make_pdf([zlib.compress(content, 1)], flate=True)


def test_a_legit_stream_over_pypdfs_default_limit_is_read(tmp_path: Path, parser: Parser) -> None:
    import io

    import pypdf
    from pypdf.errors import LimitReachedError

    data = honest_big_stream(80)
    with pytest.raises(LimitReachedError):  # what the old code met: pypdf's own 75 MB cap
        pypdf.PdfReader(io.BytesIO(data)).pages[0].extract_text()
    (tmp_path / "scan.pdf").write_bytes(data)
    text = parser.parse(tmp_path / "scan.pdf").sections[0].text
    assert "Scanned minutes of the harbour board" in text and "Text after the inline image" in text


def test_a_refused_page_costs_that_page_not_the_file(tmp_path: Path, parser: Parser) -> None:
    path = tmp_path / "mixed.pdf"
    path.write_bytes(make_pdf([inflating_to(1), zlib.compress(text_page("the readable page"))], flate=True))
    doc = parser.parse(path)
    assert [s.page for s in doc.sections] == [2] and "the readable page" in doc.sections[0].text
    assert any(w.startswith("page 1 skipped: a stream is too large to decompress") and "parse_memory_mb" in w
               for w in doc.warnings), doc.warnings


def test_a_slow_page_is_skipped_and_the_worker_carries_on(tmp_path: Path) -> None:
    slow_page = zlib.compress(b"BT /F1 12 Tf " + b"(a) Tj " * 200_000 + b"ET")
    slow = tmp_path / "slow.pdf"
    slow.write_bytes(make_pdf([slow_page], flate=True))
    mixed = tmp_path / "mixed.pdf"
    mixed.write_bytes(make_pdf([zlib.compress(text_page("before the slow page")), slow_page,
                                zlib.compress(text_page("after the slow page"))], flate=True))
    config = dataclasses.replace(load_config(), parse_timeout=0.5)
    with Parser(config) as parser:
        assert _reason(parser, slow) == "timed out after 0.5s on page 1; set parse_timeout to allow longer"
        doc = parser.parse(mixed)
        assert [s.page for s in doc.sections] == [1, 3]
        assert "page 2 skipped: timed out after 0.5s; set parse_timeout to allow longer" in doc.warnings
        assert parser.worker.started == 1  # the page alarm, not a kill: the worker lives on


def test_a_long_pdf_is_timed_per_page_not_per_file(tmp_path: Path) -> None:
    """Pages that each take a while: the whole file takes far longer than parse_timeout,
    yet every page is read, because each page done moves the watchdog's deadline on."""
    page = zlib.compress(b"BT /F1 12 Tf 72 720 Td 14 TL " + b"(long line of text) Tj T* " * 1500 + b"ET")
    path = tmp_path / "long.pdf"
    path.write_bytes(make_pdf([page] * 24, flate=True))
    import time

    config = dataclasses.replace(load_config(), parse_timeout=3)
    with Parser(config) as parser:
        parser.worker.watchdog = 3  # no grace beyond the limit itself
        started = time.monotonic()
        doc = parser.parse(path)
        took = time.monotonic() - started
    assert len(doc.sections) == 24 and not doc.warnings
    if took < 3:
        pytest.skip(f"this machine read 24 pages in {took:.1f}s: the per-page clock was not needed")


def test_the_watchdog_kills_a_child_that_makes_no_progress(tmp_path: Path) -> None:
    slow = tmp_path / "slow.pdf"
    slow.write_bytes(make_pdf([zlib.compress(b"BT /F1 12 Tf " + b"(a) Tj " * 200_000 + b"ET")], flate=True))
    good = tmp_path / "good.pdf"
    good.write_bytes(make_pdf([text_page("after the kill")]))
    config = dataclasses.replace(load_config(), parse_timeout=60)
    with Parser(config) as parser:
        assert parser.parse(good).sections  # worker warm: the watchdog measures parsing only
        parser.worker.watchdog = 0.5  # below the child's own page alarm: the parent must act
        assert _reason(parser, slow).startswith("timed out after 60s")
        parser.worker.watchdog = 60  # the next worker starts cold: on a busy machine that alone can pass 0.5 s
        assert "after the kill" in parser.parse(good).sections[0].text
        assert parser.worker.started == 2


def test_one_parser_for_pdfs_and_notes_hashes_the_bytes_it_parsed(tmp_path: Path) -> None:
    """The PDF goes through the worker, the note through this process; both documents carry
    the sha256 of the very bytes that were parsed (the index records that hash)."""
    import hashlib

    path = tmp_path / "p.pdf"
    path.write_bytes(make_pdf([text_page("shared")]))
    note = tmp_path / "n.md"
    note.write_text("# Heading\n\nnote text\n")
    with Parser(load_config()) as parser:
        pdf_doc, note_doc = parser.parse(path), parser.parse(note)
    assert pdf_doc.sections[0].page == 1
    assert note_doc.sections[0].heading_path == ("n", "Heading")
    assert pdf_doc.sha256 == hashlib.sha256(path.read_bytes()).hexdigest()
    assert note_doc.sha256 == hashlib.sha256(note.read_bytes()).hexdigest()


def kerned_table_page(rows: int) -> bytes:
    """A table set glyph by glyph in one TJ array, each glyph kerned against the next (as
    typesetting software writes justified or tracked text): every glyph is two array
    elements, so a few hundred rows make an array longer than pypdf's default 100,000."""
    parts = []
    for i in range(1, rows + 1):
        line = f"Row {i} widget segment revenue {i * 7} thousand. "
        parts.extend(f"({c}) -3" if c not in "()\\" else "" for c in line)
    return f"BT /F1 6 Tf 36 760 Td [{' '.join(parts)}] TJ ET".encode()


def test_an_array_over_pypdfs_default_limit_is_read(tmp_path: Path, parser: Parser) -> None:
    import io

    import pypdf
    from pypdf.errors import LimitReachedError

    data = make_pdf([zlib.compress(kerned_table_page(1400))], flate=True)
    with pytest.raises(LimitReachedError, match="array element"):  # what main met on real 10-Q filings
        pypdf.PdfReader(io.BytesIO(data)).pages[0].extract_text()
    (tmp_path / "table.pdf").write_bytes(data)
    text = parser.parse(tmp_path / "table.pdf").sections[0].text
    assert "Row 1 widget segment revenue 7 thousand" in text and "Row 1400 widget" in text


def test_an_array_over_the_limit_costs_its_page_and_names_the_setting(tmp_path: Path) -> None:
    from ragcli.ingest.pdf import PdfLimits, parse_pdf

    path = tmp_path / "mixed.pdf"
    path.write_bytes(make_pdf([zlib.compress(kerned_table_page(1400)), zlib.compress(text_page("the next page"))],
                              flate=True))
    small = PdfLimits(memory_mb=40)  # arrays up to 40,000 elements: the table's is longer
    doc = parse_pdf(path, limits=small)
    assert [s.page for s in doc.sections] == [2]
    assert any(w.startswith("page 1 skipped: an array is too long to read (over 40,000 elements)")
               and "parse_memory_mb" in w for w in doc.warnings), doc.warnings


def test_rag_index_reads_a_table_whose_array_is_over_pypdfs_default(tmp_path: Path) -> None:
    """End to end: the file is indexed, not refused, and its last row can be found."""
    import json

    folder = tmp_path / "reports"
    folder.mkdir()
    (folder / "segment table.pdf").write_bytes(make_pdf([zlib.compress(kerned_table_page(1400))], flate=True))
    report = json.loads(ok(rag("index", folder, "--json")).stdout)
    assert report["files_indexed"] == 1 and report["files_failed"] == [], report
    hits = json.loads(ok(rag("search", "Row 1397 widget segment revenue", "--json", "-k", "3")).stdout)["results"]
    assert hits and hits[0]["path"].endswith("segment table.pdf") and "Row 1397 widget" in hits[0]["text"]


def test_a_dot_leader_joins_a_label_to_its_value(tmp_path: Path, parser: Parser) -> None:
    """The Treasury FAST Book lists its fund groups as "Deposit Fund ........ 6000-6999": read as
    dots, ". 6000" ended a sentence, so the label and its range were two quotes, and a line of 170
    characters was chunked alone. A leader is read as one mark between the two."""
    rows = [("General Fund", "0000-3899"), ("Public Enterprise Revolving Fund", "4000-4499"),
            ("Intra-Governmental Revolving Fund", "4500-4999"), ("Special Fund", "5000-5999"),
            ("Deposit Fund", "6000-6999"), ("Trust Revolving Fund", "8400-8499")]
    contents = text_page("CONTENTS", "Account symbols for deposit funds . . . . . . . . . . 2",
                         "Deposit funds for all agencies . . . . . . . . . . . . . 2",
                         "Index of trust funds . . . . . . iv")
    page = text_page("EXPENDITURE ACCOUNT SYMBOLS BY FUND GROUP",
                     *(f"{label} {'.' * (70 - len(label))} {span}" for label, span in rows))
    folder = tmp_path / "reports"
    folder.mkdir()
    (folder / "fast book.pdf").write_bytes(make_pdf([contents, page]))
    text = "\n".join(s.text for s in parser.parse(folder / "fast book.pdf").sections)
    assert "Deposit Fund \u2026 6000-6999" in text and "Index of trust funds \u2026 iv" in text and ".." not in text
    home = tmp_path / "home"
    ok(rag("index", folder, home=home))
    answer = json.loads(ok(rag("ask", "--quotes", "--json", "Which account symbols are for deposit funds?",
                               home=home)).stdout)
    assert any("Deposit Fund \u2026 6000-6999" in q["text"] for q in answer["quotes"]), answer["quotes"]
    # a contents line names the question's words and answers nothing: never a quote
    assert not any(q["page"] == 1 for q in answer["quotes"]), answer["quotes"]


def test_a_pdf_warning_repeated_per_font_is_one_note() -> None:
    """pypdf warns once per font object ("fontTools is required to fully parse the encoding of a
    CFF Type1 font in font dictionary {...}"), with the object's dictionary in the message: the EPA
    incident management handbook printed four such notes. They are one note, the hint kept."""
    from pypdf._utils import logger_warning

    from ragcli.ingest.pdf import _capture_pypdf_warnings, _dedupe

    notes: list[str] = []
    with _capture_pypdf_warnings(notes):
        for font in ("PQXQEU+MinionPro-Regular", "NLYNFA+MinionPro-Regular"):
            logger_warning("fontTools is required to fully parse the encoding of a CFF Type1 font in font "
                           f"dictionary {{'/BaseFont': '/{font}', '/Widths': [227, 0, 480]}}, but is not "
                           "installed. Consider installing fontTools if you encounter encoding problems.",
                           source="pypdf")
    assert len(_dedupe(notes)) == 1 and "fontTools" in notes[0] and "MinionPro" not in notes[0]
