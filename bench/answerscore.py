"""The yardstick of bench_answers2.py: what the reader sees, and how much of the reference it
carries. Kept apart from ragcli on purpose: ragcli's own word functions (``ragcli.words``)
may change with the pipeline they measure, and a ruler that moves with the thing measured
tells nothing. The content-word rule below is ragcli.words.query_terms as of issue 19.
"""

from __future__ import annotations

import re

_WORD = re.compile(r"[a-z0-9]+")
_STOP = frozenset(
    "a an and are as at be by can do does for from how i if in into is it its me my of on or "
    "the this that to was what when where which who why will with you your yours".split())
_NUMBER = re.compile(r"(?<![\w.])\d[\d,]*(?:\.\d+)?")
# Our own framing around quotes, not a claim about the notes.
FRAMING = ("Your notes say:", "These passages may answer it", "these passages may answer it")
# How an answer says plainly that the notes leave a part of the question out.
_MISSING = re.compile(
    r"\b(?:notes?|vault)\b[^.\n]{0,40}\b(?:don['’]t|do not|doesn['’]t|does not|never)\s+"
    r"(?:seem to\s+)?(?:say|cover|mention|contain|include|answer|tell)"
    r"|\bnot (?:covered|mentioned|found) in your notes\b|\bno note (?:says|covers|mentions)\b"
    r"|\bnothing in your notes\b", re.IGNORECASE)

# the sets of questions typed as users ask them: scored by the note each expects
USERS_SETS = ("users", "users2", "users3", "users4", "users5", "users6", "users7")


def content_words(text: str) -> set[str]:
    return {_stem(w) for w in _WORD.findall((text or "").lower()) if w not in _STOP and len(w) > 1}


def _stem(word: str) -> str:
    for suffix in ("ing", "ed", "es", "s"):
        if len(word) > len(suffix) + 3 and word.endswith(suffix):
            return word[: -len(suffix)]
    return word


def share(part: set[str], whole: set[str]) -> float:
    return len(part & whole) / len(part) if part else 1.0


_UNITS = {"s": "s", "sec": "s", "secs": "s", "second": "s", "seconds": "s", "min": "min", "mins": "min",
          "minute": "min", "minutes": "min", "h": "h", "hr": "h", "hrs": "h", "hour": "h", "hours": "h",
          "day": "day", "days": "day", "week": "week", "weeks": "week", "g": "g", "gram": "g", "grams": "g",
          "°c": "°c", "°": "°c", "degrees": "°c", "bar": "bar", "psi": "psi", "mb": "mb", "gb": "gb", "%": "%"}
_MEASURE = re.compile(r"(?<![\d.:])(\d+(?:\.\d+)?)(?!:\d)\s?(°c|°|%|[a-z]+)", re.I)


def measures(text: str) -> set[tuple[str, str]]:
    """(number, unit) pairs: "for 2 minutes" is not said by "2:45" or by "2 g"."""
    return {(n, _UNITS[u.lower()]) for n, u in _MEASURE.findall(text or "") if u.lower() in _UNITS}


def numbers(text: str) -> set[str]:
    # leading zeros dropped: "6:00" says what "06:00" says
    return {(n.replace(",", "").rstrip(".").lstrip("0") or "0") for n in _NUMBER.findall(text or "")}


def norm(text: str) -> str:
    """For `must` strings: lower case, Markdown's backticks and emphasis and table bars gone,
    whitespace collapsed (a table row or an indented code line reads the same quoted or not)."""
    text = (text or "").replace("\u00a0", " ").replace("\\|", " ")
    text = re.sub(r"[`*]", "", text.lower()).replace("|", " ")
    return " ".join(text.split())


def shows(must: str, text: str) -> bool:
    """A `must` string is in the text. One written as table cells ("Next tab | Ctrl+Tab")
    also counts when its cells stand in that order on one line, whatever the row's other
    cells and however the row is laid out ("Switch To: Next tab; ...; Windows/Linux: Ctrl+Tab")."""
    if norm(must) in norm(text):
        return True
    cells = [norm(c) for c in must.split("|") if norm(c)] if "|" in must else []
    return bool(cells) and any(_in_order(cells, norm(line)) for line in (text or "").splitlines())


def _in_order(cells: list[str], line: str) -> bool:
    at = 0
    for cell in cells:
        at = line.find(cell, at)
        if at < 0:
            return False
        at += len(cell)
    return True


def shown_text(stdout: str) -> str:
    """What the reader reads: `rag ask`'s stdout above the list of sources."""
    lines = stdout.splitlines()
    for i, line in enumerate(lines):
        if line.strip() == "Sources:":
            lines = lines[:i]
            break
    return "\n".join(lines).strip()


def says_missing(text: str) -> bool:
    return bool(_MISSING.search(text or ""))


def refused(record: dict) -> bool:
    """Nothing from the notes shown: no quote, no passage."""
    return not record["covered"] and not record["quotes"]


def answer_only(record: dict) -> str:
    """The generated answer as shown, without our framing and citation marks."""
    text = record["answer"] if record["covered"] else ""
    for f in FRAMING:
        text = text.replace(f, "")
    return re.sub(r"\[\d+[\])]", "", text)  # "[3)": a garbled citation mark is not a figure


def quote_text(q: dict) -> str:
    return " ".join(str(q.get(k) or "") for k in ("title", "heading", "context", "text"))


def score(row: dict, record: dict) -> dict:
    """Figures for one question from one checkout."""
    shown = shown_text(record["stdout"])
    words = content_words(shown)
    out = {"id": row["id"], "set": row["set"], "answerable": row["answerable"], "refused": refused(record),
           "words_read": len(shown.split()), "first_quote_s": record["first_quote_s"],
           "total_s": record["total_s"], "dropped": record["dropped"]}
    out["hedged"] = not out["refused"] and "These passages may answer it" in record["stdout"]
    answer = answer_only(record)
    # the "says it twice": a quote of 5+ words that the reader meets again below it
    flat = " ".join(shown.split())
    out["repeats"] = any(len(t.split()) >= 5 and flat.count(t) >= 2
                         for t in (" ".join(str(q.get("text") or "").split()) for q in record["quotes"]))
    sources = " ".join(quote_text(q) for q in record["quotes"])
    cited = " ".join(quote_text(q) for q in record["quotes"] if q.get("n") in set(record["cited"])) or sources
    out["support"] = share(content_words(answer), content_words(cited)) if answer.strip() else None
    invented = numbers(answer) - numbers(sources) - numbers(row["question"])
    invented |= {f"{n} {u}" for n, u in measures(answer) - measures(sources) - measures(row["question"])}
    out["invented"] = sorted(invented)
    if not row["answerable"]:
        return out
    if row.get("reference"):
        out["recall"] = share(content_words(row["reference"]), words)
    if row.get("facts"):
        out["facts"] = sum(f.lower() in shown.lower() for f in row["facts"]) / len(row["facts"])
    if row.get("must"):
        found = [shows(m, shown) for m in row["must"]]
        out["must"] = sum(found) / len(found)
        out["block_whole"] = all(found)
    if row.get("parts"):
        covered = []
        for part in row["parts"]:
            if part["answer"] is None:
                covered.append(says_missing(shown) and not out["refused"])  # not a blanket refusal
            else:
                covered.append(all(shows(m, shown) for m in part["must"]))
        out["parts"] = sum(covered) / len(covered)
        out["all_parts"] = all(covered)
    if row.get("file"):  # a report: a quote from it
        out["note_shown"] = any(str(q.get("path") or "").endswith("/" + row["file"]) for q in record["quotes"])
    if row["set"] in ("paraphrase", *USERS_SETS):
        want = {row["path"], *row.get("also", [])}
        shown_paths = {q.get("path", "") for q in record["quotes"]} | set(record["sources"])
        out["note_shown"] = any(p.endswith("/" + w) or p == w for p in shown_paths for w in want)
    return out
