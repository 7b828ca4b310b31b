"""PDFs through the parsing worker: real papers, tricky files, and hostile files made here."""

from __future__ import annotations

import dataclasses
import zlib
from pathlib import Path

import pytest

from ragcli.config import load_config
from ragcli.ingest import ParseError, Parser

from conftest import PDFS  # the path as reached (../shared may be a symlink)
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
    assert "too large to decompress" in _reason(parser, tmp_path / "bomb.pdf")
    assert parser.parse(good).sections[0].text.startswith("still fine")


def test_slow_pdf_times_out_and_the_next_file_gets_a_fresh_worker(tmp_path: Path) -> None:
    slow = tmp_path / "slow.pdf"
    slow.write_bytes(make_pdf([zlib.compress(b"BT /F1 12 Tf " + b"(a) Tj " * 200_000 + b"ET")], flate=True))
    good = tmp_path / "good.pdf"
    good.write_bytes(make_pdf([text_page("after the timeout")]))
    config = dataclasses.replace(load_config(), parse_timeout=0.5)
    with Parser(config) as parser:
        assert parser.parse(good).sections  # worker warm: the timeout measures parsing only
        assert _reason(parser, slow) == "timed out after 0.5s"
        assert "after the timeout" in parser.parse(good).sections[0].text
        assert parser.worker.started == 2


def test_memory_limit_stops_a_greedy_parse(tmp_path: Path) -> None:
    # 60 MB of text operators inflate under pypdf's own 75 MB cap: only RLIMIT_AS stops it.
    greedy = tmp_path / "greedy.pdf"
    greedy.write_bytes(make_pdf([zlib.compress(b"BT /F1 1 Tf " + b"(x) Tj " * 8_500_000 + b"ET", 1)],
                                flate=True))
    good = tmp_path / "good.pdf"
    good.write_bytes(make_pdf([text_page("memory is back")]))
    config = dataclasses.replace(load_config(), parse_memory_mb=200, parse_timeout=60)
    with Parser(config) as parser:
        reason = _reason(parser, greedy)
        assert "memory" in reason and "200 MB" in reason
        assert "memory is back" in parser.parse(good).sections[0].text


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
