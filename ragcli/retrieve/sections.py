"""More of the best notes read for evidence: the sections around the hits, and the sections
whose headings say what was asked.

Search ranks chunks; a how-to answer is often a short block under a heading that names the
task ("Embed an image in a note", "Nesting lists") in a note that search did find, while the
chunk itself ranks 10th to 50th: its few words ("![[Engelbart.jpg]]") say little to either
side. Two rules add such chunks as candidates after every hit, for ``evidence`` to judge:
- ``with_sections``: the rest of the sections the best hits stand in;
- ``with_matching_sections``: in the notes of the best hits, the sections whose heading is
  closest in meaning to the question.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

import numpy as np

from ..types import Hit

SECTION_HITS = 3  # the best hits whose sections are read whole for evidence
SECTION_CHUNKS = 4  # ... at most this many more chunks for each
HEADING_NOTES = 5  # the notes of the best hits whose headings are read against the question
HEADING_SECTIONS = 2  # the sections with the closest headings added, across those notes
# ... only by this much more than the hits' own headings: a tie is no reason to add a section. 5e-5
# apart, two conversions of one model (F16, F32) chose differently ("Walk me through making my V60
# coffee" took in the grinder table and lost the recipe's steps). 0.003 and 0.01 answer the 432
# bench questions alike; 0.01 would lose "Parts list" for "What do I need to buy for the drip
# watering setup" (0.009 over).
HEADING_MARGIN = 0.003


def with_sections(hits: Sequence[Hit], section_chunks: Callable[[str, str], Sequence]) -> list[Hit]:
    """The hits, then the rest of the sections the best of them stand in. A hit is often a part
    of its section that reads like the question without answering it: for "show the contents of
    one note inside another", the embedded note under "Embed a note in another note" ranks 3rd,
    and the section's own "To embed a note: ![[Internal links]]" 6th. The added chunks rank
    after every hit."""
    best = [h.chunk for h in sorted(hits, key=lambda h: h.rank)[:SECTION_HITS]]
    return _after_hits(hits, (section_chunks(c.path, c.heading) for c in best if c.page is None and c.heading),
                       SECTION_CHUNKS)


def _after_hits(hits: Sequence[Hit], groups: Iterable[Sequence], most: int | None = None) -> list[Hit]:
    """The hits, then the chunks of each group that neither a hit nor an earlier group holds
    (``most`` of them at most from one group), all ranked after every hit."""
    out = list(hits)
    held = {h.chunk.id for h in hits}
    rank = max((h.rank for h in hits), default=0) + 1
    for group in groups:
        fresh = [c for c in group if c.id not in held][:most]
        held.update(c.id for c in fresh)
        out += [Hit(c, 0.0, rank) for c in fresh]
    return out


def heading_text(title: str, heading: str) -> str:
    """A section's heading path as the embedding model reads it, the note's title first."""
    if not heading:
        return title
    return heading if not title or heading.startswith(title) else f"{title} > {heading}"


def with_matching_sections(question: str, hits: Sequence[Hit], note_headings: Callable[[str], Sequence[str]],
                           section_chunks: Callable[[str, str], Sequence],
                           embed: Callable[[list[str]], np.ndarray]) -> list[Hit]:
    """The hits, then the sections of the best hits' notes whose headings come closest in
    meaning to the question, when no hit stands in them yet. A heading names what its section
    does in few words, as a question does ("put a picture that's in my vault into a note":
    "Embed an image in a note"), where the block under it is code or a list a search barely
    finds (bench/diagnose_howto.py: of the 7 how-to answers outside the evidence whose note
    was among the top 5, 4 stood under that note's closest heading). The added chunks rank
    after every hit; ``embed`` reads the question as evidence does, so its vector is reused."""
    best = sorted((h for h in hits if h.chunk.page is None), key=lambda h: h.rank)
    titles = {}
    for h in best:
        if len(titles) < HEADING_NOTES:
            titles.setdefault(h.chunk.path, h.chunk.title)
    held = list(dict.fromkeys((h.chunk.path, h.chunk.title, h.chunk.heading) for h in best if h.chunk.heading))
    sections = [(path, heading) for path, title in titles.items() for heading in note_headings(path)
                if heading and (path, title, heading) not in held]
    if not sections or not held:
        return list(hits)
    vectors = embed([question] + [heading_text(t, h) for _p, t, h in held]
                    + [heading_text(titles[p], h) for p, h in sections])
    closeness = vectors[1:] @ vectors[0]
    # only a heading that names the question better than every section a hit stands in: where a
    # hit's own heading is the closest, the hit is the section asked about and more would only
    # crowd its units out
    bar = float(closeness[:len(held)].max())
    named = closeness[len(held):]
    chosen = [sections[i] for i in np.argsort(-named, kind="stable")[:HEADING_SECTIONS]
              if named[i] > bar + HEADING_MARGIN]
    return _after_hits(hits, (_section_and_parent(section_chunks(path, heading), heading)
                              for path, heading in chosen))


def _section_and_parent(chunks: Sequence, heading: str) -> list:
    """A section's own chunks, then its parent's (where a lead-in to the section often stands:
    "To embed a note:" above the embedded note's own heading), ``SECTION_CHUNKS`` at most."""
    parent = heading.rsplit(" > ", 1)[0] if " > " in heading else None
    own = [c for c in chunks if c.heading == heading]
    return (own + [c for c in chunks if c.heading == parent])[:SECTION_CHUNKS]
