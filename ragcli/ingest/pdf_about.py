"""What a report is about: organisation, kind of report and period, read from where a reader
sees them: the file name, the PDF's metadata (title, subject, author), the cover page and
the running headers (lines repeated at the top or foot of many pages).

A question names a report in a reader's words ("OPM's 2022 report", "Q2 2023", "the most
recent quarterly report"), and those words are often only on the cover or in the file name,
not in the paragraph or table row that answers. pdf.py puts ``About.line()`` in the heading
of every chunk of the file (embedded and keyword-indexed, never quoted), the period's end as
the document's date (``rag search --since/--until`` filter and sort on it) and the
organisation's acronym and the period as tags (``rag search --tag opm``).

The rules are patterns of layout and wording, never names of files. They were tuned on half
of ../shared/corpora/pdfs-long and checked on the other half (bench/bench_pdf_about.py).
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

MONTHS = ("january february march april may june july august september october november "
          "december").split()
_MONTH = (r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|"
          r"oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?")
_YEAR = r"((?:19|20)\d\d)"
_DATE = rf"({_MONTH})\s+(\d{{1,2}}),?\s+{_YEAR}"
_ENDED = re.compile(rf"\b((?:three|six|nine|twelve|3|6|9|12)\s+months|quarter(?:ly period)?|period|(?:fiscal )?year)"
                    rf"\s+ended\s+{_DATE}", re.I)
_QUARTER = re.compile(rf"\b(?:Q([1-4])\s*(?:FY\s?)?{_YEAR}|{_YEAR}\s*Q([1-4])|(first|second|third|fourth)\s+quarter"
                      rf"(?:\s+of)?(?:\s+fiscal)?(?:\s+year)?\s+{_YEAR})\b", re.I)
_FISCAL = re.compile(rf"\b(?:fiscal\s+year|FY)\s?{_YEAR}(?:\s*[-–—]\s*(?:FY\s?)?{_YEAR})?", re.I)
_FISCAL_SHORT = re.compile(r"(?<![a-z0-9])fy[\s_-]?((?:19|20)\d\d|\d\d)(?:[_-]((?:19|20)\d\d))?(?![0-9])", re.I)
_MONTH_YEAR = re.compile(rf"\b({_MONTH})\s+{_YEAR}\b", re.I)
_BARE_YEAR = re.compile(rf"(?<![\d.-]){_YEAR}(?![\d.])")
_REPORT = re.compile(r"\b(form\s+10-[qk]|publication\s+\d+[a-z]?|special publication\s+[\d-]+\w*|"
                     r"(?:[A-Za-z][\w-]*\s+){0,4}(?:report|plan|guide|handbook|instructions?|standards|"
                     r"manual|statements?|filing|review|budget))\b", re.I)
_ORG_NOUN = re.compile(r"\b(office|department|agency|administration|bureau|service|commission|survey|"
                       r"board|institute|corporation|company|inc|ltd|llc|plc|group|bank|authority|"
                       r"council|ministry|government|university|reserve|laboratory|center|centre)\b\.?", re.I)
_REGISTRANT = re.compile(r"exact name of registrant", re.I)
_SMALL = {"of", "the", "and", "for", "on", "in", "&"}
QUARTER_END = {1: "03-31", 2: "06-30", 3: "09-30", 4: "12-31"}
ORDINAL = {"first": 1, "second": 2, "third": 3, "fourth": 4}


@dataclass(frozen=True)
class About:
    organisation: str = ""
    acronym: str = ""  # only when the acronym itself appears in the file name, title or headers
    report: str = ""  # kind of report: "Annual Performance Report", "Form 10-Q", ...
    period: str = ""  # as a reader says it: "Fiscal Year 2022 (FY 2022, FY22)", "Q2 2024 (...)"
    period_end: str | None = None  # ISO date the period ends, for date filters and sorting

    def line(self, title: str = "") -> str:
        """The context line every chunk of the file carries (empty when nothing was read),
        without what the title already says: each chunk pays for it out of its token budget,
        and a long shared prefix makes a file's chunks alike to the embedding model."""
        said = " ".join(title.lower().split())
        org = f"{self.organisation} ({self.acronym})" if self.acronym and self.organisation else (
            self.organisation or self.acronym)
        period = self.period
        main, _, aliases = period.partition(" (")
        if main and main.lower() in said:
            period = aliases.rstrip(")")
        parts = [org if org.lower() not in said else "", self.report if self.report.lower() not in said else "", period]
        return " · ".join(p for p in parts if p)

    def tags(self) -> tuple[str, ...]:
        tags = [self.acronym.lower()] if self.acronym else []
        if self.period_end:
            tags.append(_period_tag(self.period, self.period_end))
        return tuple(t for t in tags if t)


def read_about(file_stem: str, meta: dict[str, str], pages: list[str]) -> About:
    """``meta``: the PDF's info dictionary (title, subject, author) as plain strings; ``pages``:
    each page's text (the cover is the first page with text)."""
    name = re.sub(r"[_]+", " ", file_stem)
    headers = running_headers(pages)
    cover = _cover_lines(pages)
    title = " ".join(v for v in (meta.get("title", ""), meta.get("subject", "")) if v)
    organisation, acronym = _organisation(meta.get("author", ""), headers, cover, " ".join([name, title, *headers]))
    report = next((m.group(1) for text in [title, *headers, *cover[:25]] for m in [_REPORT.search(text)] if m), "")
    period, end = _period(title, name, headers + [c for c in cover if len(c.split()) <= 10], cover)
    return About(organisation, acronym, _tidy(report), period, end)


def running_headers(pages: list[str], share: float = 0.3) -> list[str]:
    """Lines at the top or foot of at least ``share`` of the pages (at least 3), page numbers
    aside: the running header and footer, first seen form."""
    seen: Counter[str] = Counter()
    first: dict[str, str] = {}
    texts = [p for p in pages if p.strip()]
    for text in texts:
        lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
        for ln in dict.fromkeys(lines[:3] + lines[-3:]):
            key = re.sub(r"\d+", "#", " ".join(ln.lower().split()))
            if sum(c.isalpha() for c in key) >= 4:
                seen[key] += 1
                first.setdefault(key, " ".join(ln.split()))
    need = max(3, int(len(texts) * share))
    return [first[k] for k, n in seen.most_common() if n >= need][:6]


def _cover_lines(pages: list[str]) -> list[str]:
    for text in pages[:3]:
        lines = [" ".join(ln.split()) for ln in text.splitlines() if ln.strip()]
        if sum(len(ln) for ln in lines) >= 20:
            return lines[:60]
    return []


def _organisation(author: str, headers: list[str], cover: list[str], where: str) -> tuple[str, str]:
    """(organisation, acronym). An SEC filing's cover names the registrant above "exact name of
    registrant"; otherwise the first organisation-like line of the metadata author, the
    running headers and the cover whose acronym the file name, title or headers use (a
    department above its agency, a typesetter as the author: the one the file is named for),
    else the first such line."""
    for i, line in enumerate(cover):
        if _REGISTRANT.search(line) and i > 0:
            return _tidy(cover[i - 1]), ""
    candidates = []
    for line in [author] + headers + cover[:25]:
        line = re.sub(r",?\s*(?:https?://)?\S+\.(?:gov|com|org|net)\S*", "", line).strip()
        if _looks_like_org(line):
            candidates.append(_tidy(_org_part(line)))
    for org in candidates:
        acronym = _acronym(org, where)
        if acronym:  # "... Internal Revenue Service IRS" (a logo's letters after the name): said once
            return re.sub(rf"\s+{acronym}$", "", org), acronym
    return (candidates[0], "") if candidates else ("", "")


def _looks_like_org(line: str) -> bool:
    words = line.split()
    if (not (2 <= len(words) <= 9) or not _ORG_NOUN.search(line) or re.search(r"[.:;!?]$", line.strip())
            or re.search(r"\d", line)):  # a numbered affiliation or an address, not a name
        return False
    capital = sum(w[0].isupper() for w in words if w.lower() not in _SMALL)
    return capital >= len([w for w in words if w.lower() not in _SMALL]) - 1


def _org_part(line: str) -> str:
    """A header such as "OPM Fiscal Year 2016 Annual Performance Report" holds the report too:
    keep what comes before the period or report words."""
    cut = min([m.start() for m in (_FISCAL.search(line), _REPORT.search(line)) if m] or [len(line)])
    return line[:cut].strip(" ,-–|·") or line


def _acronym(organisation: str, where: str) -> str:
    """The initials (3 letters or more) of the longest run of the name's capitalised words that
    the file name, title or headers use ("Department of the Treasury Internal Revenue Service" with a file
    "irs_..." gives "IRS"), else ""."""
    words = [m for m in re.finditer(r"[A-Za-z][\w.]*", organisation) if m.group(0).lower() not in _SMALL]
    if len(words) == 1 and words[0].group(0).isupper() and len(words[0].group(0)) >= 2:
        return words[0].group(0)
    best = ""
    for i in range(len(words)):
        for j in range(i + 2, len(words) + 1):
            run = words[i:j]
            initials = "".join(("US" if w.group(0).startswith("U.S") or w.group(0) == "US" else w.group(0)[0])
                               for w in run).upper()
            if len(initials) >= 3 and len(initials) > len(best) \
                    and re.search(rf"(?<![A-Za-z]){initials}(?![A-Za-z])", where, re.I):
                best = initials
    return best


def _period(title: str, name: str, headline: list[str], cover: list[str]) -> tuple[str, str | None]:
    """The most specific period named: a quarter or months ended a date, then a fiscal year,
    then a month, then a year (these last only in the title, file name, headers and short
    cover lines). Among equally specific ones, the title's, then the file name's, then the
    latest (a filing compares with the year before; a cover also carries its print date)."""
    found: list[tuple[int, int, str, str]] = []  # (rank, source, end, label)
    for source, texts in ((2, [title]), (1, [name]), (0, headline + cover)):
        for text in texts:
            for m in _ENDED.finditer(text):
                end = _iso(m.group(2), m.group(3), m.group(4))
                if end:
                    found.append((4, source, end, _ended_label(m.group(1), end)))
            for m in _QUARTER.finditer(text):
                q = int(m.group(1) or m.group(4) or ORDINAL[(m.group(5) or "first").lower()])
                year = m.group(2) or m.group(3) or m.group(6)
                found.append((4, source, f"{year}-{QUARTER_END[q]}", _quarter_label(q, year)))
            found += [(3, source, *_fiscal(m.group(1), m.group(2))) for m in _FISCAL.finditer(text)]
            if texts is cover:
                continue
            for m in _FISCAL_SHORT.finditer(text):
                year = m.group(1) if len(m.group(1)) == 4 else "20" + m.group(1)
                found.append((3, source, *_fiscal(year, m.group(2))))
            for m in _MONTH_YEAR.finditer(text):
                month = _month(m.group(1))
                found.append((2, source, f"{m.group(2)}-{month:02d}-{_last_day(month)}",
                              f"{MONTHS[month - 1].title()} {m.group(2)}"))
            found += [(1, source, f"{m.group(1)}-12-31", m.group(1)) for m in _BARE_YEAR.finditer(text)]
    if not found:
        return "", None
    _rank, _source, end, label = max(found)
    return label, end


def _fiscal(first: str, last: str | None) -> tuple[str, str]:
    """(end, label). Where a fiscal year ends differs by organisation (30 September for the US
    government): the calendar year's end stands for it, enough to order and filter by year."""
    if last and last != first:
        return f"{last}-12-31", f"Fiscal Years {first}–{last} (FY {first}–{last})"
    return f"{first}-12-31", f"Fiscal Year {first} (FY {first}, FY{first[2:]})"


def _ended_label(what: str, end: str) -> str:
    year, month, day = end.split("-")
    said = f"{MONTHS[int(month) - 1].title()} {int(day)}, {year}"
    what = what.lower()
    if what.startswith(("three", "3 ", "quarter")):
        q = (int(month) - 1) // 3 + 1
        return f"Three Months Ended {said} (quarter ended {said}, Q{q} {year})"
    return f"{what.title()} Ended {said}"


def _quarter_label(q: int, year: str) -> str:
    words = ("first", "second", "third", "fourth")[q - 1]
    return f"Q{q} {year} ({words} quarter {year})"


def _period_tag(label: str, end: str) -> str:
    if label.startswith("Fiscal Year "):
        return "fy" + end[:4]
    if label.startswith("Fiscal Years "):
        return "fy" + label.split()[2].replace("–", "-")
    q = re.search(r"\bQ([1-4]) (\d{4})\b", label)
    if q:
        return f"{q.group(2)}-q{q.group(1)}"
    return end[:4]


def _iso(month: str, day: str, year: str) -> str | None:
    m = _month(month)
    if not 1 <= int(day) <= 31:
        return None
    return f"{year}-{m:02d}-{int(day):02d}"


def _month(word: str) -> int:
    word = word.lower().rstrip(".")[:3]
    return next(i for i, name in enumerate(MONTHS, 1) if name.startswith(word))


def _last_day(month: int) -> int:
    return 30 if month in (4, 6, 9, 11) else 28 if month == 2 else 31


def _tidy(text: str) -> str:
    text = " ".join(text.split()).strip(" ,;:-–|·")
    if text.isupper() and len(text) > 4:  # a cover set in capitals: say it as a title
        text = " ".join(w if "." in w else w.lower() if w.lower() in _SMALL else w.title() for w in text.split())
    return text[:80]
