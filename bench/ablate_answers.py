"""Issue 19's ablation: each answer rule switched off in a copy of this tree, every set of
bench_answers2 answered quotes only, and what changed against this tree's own answers.

    python bench/ablate_answers.py --homes /tmp/rb9                    # every rule below
    python bench/ablate_answers.py --homes /tmp/rb9 padding w_heading   # just these

A rule is switched off by replacing one line of its call (or constant) with the neutral one, in
a copy under --work, so the tree itself is never touched; a rule whose line has changed is
reported, not run. Per rule: how many of the 432 answers change at all, how many gain or lose
recall without it, how many read more or fewer words at the same recall, and the sets whose
mean recall or words move. A rule that changes nothing, or one answer, earns no place (issue
19's brief: a rule that holds for one file is a defect); one whose removal gains recall and
words goes. Session 13 dropped the any-figure bonus and the "pointing back" sentence this way.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
A, E, U = "ragcli/pipeline/answer.py", "ragcli/retrieve/evidence.py", "ragcli/retrieve/units.py"
P = "ragcli/retrieve/padding.py"
# rule: (file, its line as it is, the line that switches it off)
RULES = {
    "lead_ins": (A, "complete_lead_ins(quote_the_row(asked, evidence.quotes, hits_and_rows, idf), sections, asked)",
                 "quote_the_row(asked, evidence.quotes, hits_and_rows, idf)"),
    "quote_row": (A, "quote_the_row(asked, evidence.quotes, hits_and_rows, idf), sections",
                  "list(evidence.quotes), sections"),
    "whole_procedure": (A, "    quotes = with_whole_procedure(quotes, asked, sections)\n", ""),
    "sentence_after": (A, "with_sentence_after(with_rule_before(quotes, sections), asked, sections)",
                       "with_rule_before(quotes, sections)"),
    "rule_before": (A, "with_sentence_after(with_rule_before(quotes, sections), asked, sections)",
                    "with_sentence_after(quotes, asked, sections)"),
    "row_headers": (A, "with_row_headers(with_line_above(quotes, sections), sections)",
                    "with_line_above(quotes, sections)"),
    "line_above": (A, "with_row_headers(with_line_above(quotes, sections), sections)",
                   "with_row_headers(quotes, sections)"),
    "callout_titles": (A, "quotes = with_callout_titles(with_row_headers(with_line_above(quotes, sections), "
                          "sections), sections)",
                       "quotes = with_row_headers(with_line_above(quotes, sections), sections)"),
    "following": (A, "        hits_and_rows = with_following(hits_and_rows, index.page_chunks)", "        pass"),
    "page_rows": (A, "hits_and_rows = with_page_rows(read, index.page_chunks)", "hits_and_rows = read"),
    "unknown_names": (A, "unknown = unknown_names(asked, searcher.index.keyword_df) if", "unknown = [] if False and"),
    "said_otherwise": (A, "said = said_in_other_words(unheard, quotes, hits, searcher) if", "said = [] if"),
    "lead_figure": (A, "figure = direct_figure(asked, quotes, idf) or direct_count(asked, quotes)", "figure = None"),
    "between": (E, "kept = _in_reading_order(with_sentences_between(added if len(added) >= len(kept) else kept))",
                "kept = _in_reading_order(added if len(added) >= len(kept) else kept)"),
    "next_figure": (E, "added = dedupe_contained(with_next_figure(kept, units, overall, limit))",
                    "added = dedupe_contained(kept)"),
    "reason": (E, "        chosen = with_reason(chosen, units, overall, limit)", "        pass"),
    "other_steps": (E, "        chosen += other_steps(whole, units, best)", "        pass"),
    "steps_whole": (E, "            out = steps_whole(out, steps_of, W_PROCEDURE)", "            pass"),
    # rules added after session 13's ablation (sessions 14-30)
    "answer_after": (A, "quotes = with_answer_after(with_sentence_after(with_rule_before(quotes, sections), asked, "
                        "sections), sections)",
                     "quotes = with_sentence_after(with_rule_before(quotes, sections), asked, sections)"),
    "caveat": (A, "    quotes = with_caveat(quotes, asked, sections, idf)\n", ""),
    "section_leads": (A, "    quotes = with_section_leads(quotes, asked, sections)\n", ""),
    "years_asked": (A, "    quotes = of_the_years_asked(quotes, asked)  # after the gate has read them all\n", ""),
    "padding_best": (A, "quotes = without_padding_best(without_quotes_of_missing_parts(quotes, evidence, missing), "
                        "evidence,\n"
                        "                                  shape[\"tentative\"])",
                     "quotes = without_quotes_of_missing_parts(quotes, evidence, missing)"),
    "missing_quotes": (A, "without_padding_best(without_quotes_of_missing_parts(quotes, evidence, missing), evidence,",
                       "without_padding_best(quotes, evidence,"),
    "matching_sections": (A, "    read = with_matching_sections(asked, with_sections(hits, sections), "
                             "index.note_headings, sections,\n"
                             "                                  searcher.embed_passages)\n",
                          "    read = with_sections(hits, sections)\n"),
    "sections": (A, "with_matching_sections(asked, with_sections(hits, sections), index.note_headings",
                 "with_matching_sections(asked, hits, index.note_headings"),
    "scene": (A, "    scene = context_words(asked)\n", "    scene = []\n"),
    "padding": (E, "    chosen = without_padding(chosen, ask, how, bool(parts), for_parts, named)\n", ""),
    "said_once": (E, "kept = said_once(dedupe_contained(whole_lists(chosen, units, every_unit)))",
                  "kept = dedupe_contained(whole_lists(chosen, units, every_unit))"),
    "kind_led": (E, "    kind_led = not parts and answer_type(ask) is not None", "    kind_led = False"),
    "w_heading": (E, "W_HEADING = 0.03", "W_HEADING = 0.0"),
    "w_echo": (E, "W_ECHO = 0.1", "W_ECHO = 0.0"),
    "w_type": (E, "W_TYPE = 0.15", "W_TYPE = 0.0"),
    "w_procedure": (E, "W_PROCEDURE = 0.05", "W_PROCEDURE = 0.0"),
    "w_subject": (E, "W_SUBJECT = 0.3", "W_SUBJECT = 0.0"),
    "examples": (U, "    examples = _examples(pieces) if passage is None else {}", "    examples = {}"),
    "figure_column": (U, "            column = _figure_column(blocks, i + 1, lines)", "            column = None"),
    "pad_named": (P, "        if how and named_notes and unit.chunk.path not in named_notes:\n"
                     "            return named_blocks or unit.kind not in BLOCK_KINDS\n", ""),
    "pad_parts": (P, "        return has_parts and not query_terms(unit.shown) & asked", "        return False"),
    # session 34
    "everyday_words": (A, "    phrasing = {w for w in unheard if is_common_word(w)} - {asked_thing(asked)}\n",
                       "    phrasing = set()\n"),
    "addition_after": (A, "    quotes = with_addition_after(quotes, sections)\n", ""),
    "says_nothing": (U, "            and (u.kind == \"code\" or not _SAYS_NOTHING.search(u.text))\n", ""),
}


def answer(tree: Path, homes: Path, label: str, work: Path) -> dict:
    """bench_answers2's records and scores for ``tree``, every set, quotes only, with its summary
    rows by set (``sets``)."""
    out = work / f"{label}.json"
    subprocess.run([sys.executable, str(tree / "bench" / "bench_answers2.py"), "--homes", str(homes),
                    "--quotes-only", "--json", str(out)], cwd=tree, check=True, capture_output=True)
    done = json.loads(out.read_text())
    return dict(next(iter(done["runs"].values())), sets={row["set"]: row for row in done["summary"]})


def copy_without(rule: str, work: Path) -> Path | None:
    """This tree's code with ``rule`` switched off, under ``work`` (None: its line has changed)."""
    path, line, neutral = RULES[rule]
    tree = work / rule
    shutil.rmtree(tree, ignore_errors=True)
    for part in ("ragcli", "bench", "examples"):
        shutil.copytree(ROOT / part, tree / part, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tree)
    if not (tree.parent / "shared").exists():  # bench_answers2 finds the corpora beside the tree
        os.symlink(ROOT.parent / "shared", tree.parent / "shared")
    text = (tree / path).read_text()
    if text.count(line) != 1:
        return None
    (tree / path).write_text(text.replace(line, neutral))
    return tree


def compare(base: dict, run: dict) -> str:
    """One line: what switching the rule off changed, answer by answer and set by set."""
    gained, lost, more, fewer, reworded, changed = [], [], 0, 0, 0, 0
    for qid, was in base["scores"].items():
        now = run["scores"][qid]
        if base["records"][qid]["stdout"] == run["records"][qid]["stdout"]:
            continue
        changed += 1
        delta = (now.get("recall") or 0.0) - (was.get("recall") or 0.0)
        if was["refused"] != now["refused"]:
            side = gained if was["refused"] == now["answerable"] else lost  # answered now, or refused rightly
            side.append(f"{qid}(refused {was['refused']}->{now['refused']})")
        elif delta > 1e-6:
            gained.append(f"{qid}+{delta:.2f}")
        elif delta < -1e-6:
            lost.append(f"{qid}{delta:.2f}")
        elif now["words_read"] > was["words_read"]:
            more += 1
        elif now["words_read"] < was["words_read"]:
            fewer += 1
        else:
            reworded += 1
    moves = {name: ((run["sets"][name]["recall"] or 0.0) - (was["recall"] or 0.0),
                    (run["sets"][name]["words"] or 0.0) - (was["words"] or 0.0))
             for name, was in sorted(base["sets"].items())}
    moved = " ".join(f"{name} {recall:+.3f}/{words:+.0f}w" for name, (recall, words) in moves.items()
                     if abs(recall) > 1e-4 or abs(words) >= 0.5)
    return (f"{changed:3} answers change; without it {len(gained)} gain ({' '.join(gained[:6])}), "
            f"{len(lost)} lose ({' '.join(lost[:6])}), {more} read more words and {fewer} fewer at the same "
            f"recall, {reworded} the same words otherwise | {moved or 'no set moves'}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("rules", nargs="*", help=f"default: all of {', '.join(RULES)}")
    ap.add_argument("--homes", type=Path, required=True, help="bench_answers2's --homes (indexes built)")
    ap.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "ragcli-ablate")
    args = ap.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    base = answer(ROOT, args.homes, "this-tree", args.work)
    for rule in args.rules or RULES:
        tree = copy_without(rule, args.work / "trees")
        if tree is None:
            print(f"{rule:16} its line has changed: not run", flush=True)
            continue
        print(f"{rule:16} {compare(base, answer(tree, args.homes, rule, args.work))}", flush=True)


if __name__ == "__main__":
    main()
