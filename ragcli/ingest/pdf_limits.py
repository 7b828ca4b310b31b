"""What one PDF may cost: pypdf's safety limits, each set on purpose from the parse worker's
memory limit and from what real long PDFs need (bench/measure_pdf_limits.py,
bench/bench_pdfs.py), and how a limit that was reached is said to the user, with the
setting that moves it."""

from __future__ import annotations

from dataclasses import dataclass

_MB = 1 << 20


@dataclass(frozen=True)
class PdfLimits:
    """What one PDF may cost. The stream limits follow from the worker's memory limit: pypdf
    holds a decompressed stream several times over while it parses it (an 80 MB content
    stream peaks at ~370 MB), so a stream may use a fifth of the memory given to parsing."""

    memory_mb: int = 1024  # the worker's limit (parse_memory_mb); <= 0: no limit
    page_timeout: float | None = None  # seconds per page (parse_timeout); needs the main thread

    @property
    def stream_bytes(self) -> int:
        return self.memory_mb * _MB // 4 if self.memory_mb > 0 else 1 << 30

    @property
    def stream_tokens(self) -> int:
        # pypdf keeps ~140 bytes per parsed token: 2,000 tokens per MB keeps a page's parsed
        # content stream within about a quarter of the memory limit.
        return self.memory_mb * 2000 if self.memory_mb > 0 else 50_000_000

    @property
    def elements(self) -> int:
        # Arrays and dictionaries, in an object or a content stream: pypdf's 100,000 refused
        # real filings (2.2 MB 10-Qs, issue 20). An element costs about what a parsed token
        # does (a Python object and a list slot); one array may hold half a page's tokens
        # (1,024,000 at the default 1 GB), which lets the array limit, not the token limit,
        # name what was too long. The 30 real PDFs need at most 12,814 elements in one array
        # (OPM FY 2016) and 1,183 in one dictionary (IRS Pub 17): 80x headroom
        # (bench/measure_pdf_limits.py, pypdf 7.1.1, 2026-11-25).
        return self.stream_tokens // 2

    def pypdf_overrides(self, file_bytes: int) -> dict:
        """Every pypdf limit a text read can meet, set here on purpose (pypdf 7.1's names).
        Measured on the 21 long PDFs and 9 others (bench/measure_pdf_limits.py): at most
        825,034 tokens in one content stream (a USGS TM 6-B8 page; 2,048,000 here is 2.5x
        that, the least headroom of all: a page past it is skipped, naming parse_memory_mb)
        and 5.9 MB in one decoded stream (256 MB here). Left at pypdf's defaults, against
        what those files need: xform_maximum_invocations_per_extraction 5,000 (needed: 78 on
        one page),
        page_tree_maximum_depth 100 (needed: 4), outline (394 entries, depth 5) and named
        destinations (1,043) at 100,000 (never read for text), stream_filters_maximum_length
        16 and the Flate predictor sizes (images)."""
        size = self.stream_bytes
        return {
            "array_maximum_element_count": self.elements, "dictionary_maximum_element_count": self.elements,
            # a raw (still compressed) stream can be as long as the file itself
            "maximum_declared_stream_length": max(size, file_bytes),
            "zlib_maximum_output_length": size, "lzw_maximum_output_length": size,
            "run_length_maximum_output_length": size, "brotli_maximum_output_length": size,
            "jbig2_maximum_output_length": size, "array_based_stream_maximum_output_length": size,
            "image_maximum_buffer_size": size, "stream_decoding_work_maximum_length": 4 * size,
            "stream_parsing_work_maximum_count": self.stream_tokens,
        }


def refusal(exc: BaseException, limits: PdfLimits) -> tuple[str, str]:
    """(what, hint) for a pypdf limit, said so the user knows which setting moves it."""
    text = str(exc)
    hint = f"raise parse_memory_mb (now {limits.memory_mb}) to allow more"
    if "tokens" in text:
        return f"a page's content is too long to parse (over {limits.stream_tokens:,} tokens)", hint
    if "array element" in text or "dictionary entries" in text:
        kind = "an array" if "array" in text else "a dictionary"
        return f"{kind} is too long to read (over {limits.elements:,} elements)", hint
    if any(k in text for k in ("decompress", "decoding", "stream length", "buffer size", "Array-based")):
        return (f"a stream is too large to decompress (over {limits.stream_bytes // _MB} MB: "
                "a decompression bomb?)"), hint
    return f"a safety limit of the PDF reader was reached ({short(exc)})", ""


def short(exc: BaseException) -> str:
    """An exception said in one line of at most 120 characters."""
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text[:120] + ("…" if len(text) > 120 else "")
