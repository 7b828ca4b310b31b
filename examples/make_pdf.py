"""Write examples/vault/Papers/Moka pot field guide.pdf: a small two-page PDF we wrote.

Plain PDF 1.4 with the standard Helvetica font and no dependencies, so the example
vault has a real PDF whose pages ragcli cites. Run: python examples/make_pdf.py
"""

from pathlib import Path

PAGES = [
    ["Moka Pot Field Guide", "",
     "Page 1: Filling the pot",
     "Fill the bottom chamber with hot water up to the safety valve, never above it.",
     "Starting with hot water shortens the time the coffee sits on the heat and",
     "avoids a metallic, burnt taste.",
     "Fill the basket with coffee ground slightly coarser than espresso and level it",
     "with a finger. Do not tamp: a tamped basket can raise the pressure too far."],
    ["Page 2: Brewing and cleaning", "",
     "Brew on medium heat with the lid open. When the coffee turns pale and starts",
     "to gurgle, take the pot off the heat and cool the base under a cold tap to stop",
     "extraction. A 3-cup pot uses about 15 grams of coffee and 150 ml of water.",
     "Clean with hot water only; soap strips the seasoning. Replace the rubber gasket",
     "once a year or when steam escapes around the seal."],
]


def _page_stream(lines: list[str]) -> bytes:
    out = ["BT", "/F1 12 Tf", "14 TL", "72 740 Td"]
    for line in lines:
        safe = line.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")
        out.append(f"({safe}) Tj T*")
    out.append("ET")
    return "\n".join(out).encode("latin-1")


def build() -> bytes:
    objects: list[bytes] = []
    n_pages = len(PAGES)
    page_ids = [3 + 2 * i for i in range(n_pages)]
    font_id = 3 + 2 * n_pages
    info_id = font_id + 1
    objects.append(b"<< /Type /Catalog /Pages 2 0 R >>")
    kids = " ".join(f"{p} 0 R" for p in page_ids)
    objects.append(f"<< /Type /Pages /Kids [{kids}] /Count {n_pages} >>".encode())
    for i, lines in enumerate(PAGES):
        stream = _page_stream(lines)
        objects.append(f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents {page_ids[i] + 1} 0 R"
                       f" /Resources << /Font << /F1 {font_id} 0 R >> >> >>".encode())
        objects.append(b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream")
    objects.append(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
    objects.append(b"<< /Title (Moka Pot Field Guide) /Author (ragcli examples) >>")
    body = b"%PDF-1.4\n"
    offsets = []
    for number, obj in enumerate(objects, 1):
        offsets.append(len(body))
        body += f"{number} 0 obj\n".encode() + obj + b"\nendobj\n"
    xref_at = len(body)
    body += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode()
    body += b"".join(f"{o:010d} 00000 n \n".encode() for o in offsets)
    body += (f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R /Info {info_id} 0 R >>\n"
             f"startxref\n{xref_at}\n%%EOF\n").encode()
    return body


if __name__ == "__main__":
    target = Path(__file__).resolve().parent / "vault" / "Papers" / "Moka pot field guide.pdf"
    target.write_bytes(build())
    print(target)
