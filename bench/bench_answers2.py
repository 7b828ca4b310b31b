"""Answers that answer (issue 19): what `rag ask` shows, scored on questions users ask, for
this checkout and, in the same run, a baseline checkout.

Sets (``bench/questions``; ``--set`` picks some, default all):
- answers:      answers.jsonl, 84 answerable + 15 unanswerable, mostly in the notes' words;
- paraphrase:   paraphrase.jsonl, 99 questions in users' words (no reference answer: scored
                on refusals, whether the expected note is among the quotes, words, time);
- multipart:    multipart.jsonl, 36 questions of two or three parts, each part with its
                reference and `must` strings; 4 have a part no note covers (answer null);
- howto:        howto.jsonl, 40 "how do I" questions answered by a code block, list or table
                (`must`: the block's key strings);
- unanswerable: unanswerable_users.jsonl, 10 plausible questions no note covers.
- users:        users.jsonl, 60 answerable + 20 unanswerable questions typed as users ask, neither
                copying nor avoiding the note's words (reference, facts, expected note + `also`);
- keys:         keys.jsonl, 14 "which keys do X" questions over the help vault (`must`: the keys),
                written in session 16: 5 tune (seen while building the rule for them), 9 check;
- when:         when.jsonl, 32 "when" questions written blind in session 24 (16 asking a time, a version or
                an interval, 16 a condition or circumstance; `must`: the answer's key words), half tune;
- where:        where.jsonl, 32 "where" questions written blind in session 25 (16 asking where a setting or
                control is, 16 where a thing is kept or goes; `must`: the place's key words), half tune;
- define:       define.jsonl, 32 "what is X" questions written blind in session 26 (16 about a feature or
                object, 16 about a word or concept; `must`: the definition's key words), half tune;
- lists:        lists.jsonl, 32 questions whose answer is a list or table (kinds, options, formats...) written
                blind in session 26 (24 help vault, 8 examples; `must`: 2-3 of the items), half tune;
- asks:         asks.jsonl, 32 questions asking what the notes hold ("What did I write about ...?",
                "Remind me ...", "Which of my notes mention ...?") written blind in session 27 (8 examples,
                24 help vault), half tune;
- yesno:        yesno.jsonl, 32 yes/no questions ("Can I ...?", "Does Obsidian ...?", "Do I have to ...?"), the
                notes' answer yes, no or "yes, if ...", 6 of two parts, written blind in session 28 (8 examples,
                24 help vault), half tune;
- why:          why.jsonl, 32 questions asking why (16) or what happens if (16), 5 of two parts, written blind in
                session 28 (8 examples, 24 help vault; `must`: the reason's or consequence's key words), half tune;
- reports:      reports.jsonl (issue 20), 68 questions on 6 long PDF reports of pdfs-long, half
                a figure from a table, half a reason from the text; `facts` are the key
                figures; the reports asked about (``--report-files`` GLOB narrows them) are
                copied into one folder (``REPORTS``), indexed by each checkout.
- shelf:        shelf.jsonl, 48 questions on 4 other long PDF reports (40 answerable, 8 not), written blind in
                session 29, half tune (odd ids: their answers were read) and half check (never read);
                scored as reports, in a folder of its own (``SHELF``).
- users2:       users2.jsonl, 48 questions typed as users ask (40 answerable, 32 help vault and 8
                examples; 8 unanswerable), written blind in session 30 as users.jsonl was; scored as users.
- users3:       users3.jsonl, a third such set (same shape, other notes), written blind in session 32.
- users4:       users4.jsonl, a fourth (same shape, other notes again), written blind in session 32.
- users5:       users5.jsonl, a fifth (same shape, the help vault's last unused notes), written blind in session 33.
- users6:       users6.jsonl, a sixth (same shape, sections no earlier users' set asked), written blind in session 34.
- users7:       users7.jsonl, a seventh (same shape, sections neither users6 nor any earlier set asked), session 35.
Halves: multipart/howto/unanswerable carry "split": tune|check; for the older sets, odd ids
are tune and even ids check (as bench_paraphrase's dev/test). ``--split`` keeps one half.

Figures per set and checkout, from `rag ask`'s own rendering (stdout above "Sources:"):
- refused: answerable questions that got nothing from the notes; unans_answered: unanswerable
  ones that got quotes or an answer;
- hedged: answerable questions answered under "These passages may answer it; none says so
  plainly" (of those answered); unans_plain: unanswerable ones shown without that notice;
- recall: share of the reference's content words in what is shown (answered questions);
  recall_all counts refusals as 0;
- must: share of `must` strings shown (normalised: case, backticks, table bars, spacing);
  block: share of how-to questions with every `must` string shown;
- parts: share of parts covered; all_parts: questions with every part covered. A part is
  covered when all its `must` strings are shown, or, for a part no note covers, when the
  answer says plainly the notes don't say it (and is not a blanket refusal);
- facts (answers set): share of the reference facts shown verbatim;
- note: paraphrase and users questions whose expected note (or an `also`) is among the quotes/sources;
  for reports, questions with a quote from the right report;
- words: words the reader reads (stdout above the sources), mean over answered questions;
  repeats: share of answered questions where a quote (5+ words) is printed twice;
- support: share of the generated answer's content words in the quotes it cites; invented:
  answers holding a number in no quote and not in the question;
- first quote and total time: median, warm (one process per checkout answers them all).

Usage (indexes the vaults under --homes on first use; needs ../shared):
    python bench/bench_answers2.py --quotes-only                        # this checkout, every set
    python bench/bench_answers2.py --quotes-only --baseline /work/wt-base   # and today's main
    python bench/bench_answers2.py --set multipart --set howto --baseline /work/wt-base
    python bench/bench_answers2.py --set howto --split check --show ht-02   # print one answer
    python bench/bench_answers2.py --set answers --only oh-53 --only oh-08   # just these questions
    python bench/bench_answers2.py --check-sets                         # every must string, users fact, in its note
Timings come from a shared 2-core machine: compare ratios within one run.
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from answerscore import USERS_SETS, score, shows
from benchlib import rag_env

ROOT = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("RAG_BENCH_SHARED", ROOT.parent / "shared"))
REPORTS = Path(tempfile.gettempdir()) / "ragcli-bench-reports"  # the reports asked about, copied (see main)
SHELF = Path(tempfile.gettempdir()) / "ragcli-bench-shelf"  # the blind set's reports, apart from the others
# examples/vault, copied to one path for every checkout: indexed from each checkout's own folder,
# the shared home held one copy of each note per worktree ever benched (4 in /tmp/rb6), and the
# copies crowded the hits: "how long should the shot take" was said missing beside four
# copies of the grinder's table.
EXAMPLES = Path(tempfile.gettempdir()) / "ragcli-bench-examples" / "vault"
CORPORA = {"obsidian-help": SHARED / "corpora" / "obsidian-help" / "en", "examples": EXAMPLES, "reports": REPORTS,
           "shelf": SHELF}
QUESTIONS = ROOT / "bench" / "questions"
SETS = {"answers": "answers.jsonl", "paraphrase": "paraphrase.jsonl", "multipart": "multipart.jsonl",
        "howto": "howto.jsonl", "unanswerable": "unanswerable_users.jsonl", "reports": "reports.jsonl",
        "users": "users.jsonl", "keys": "keys.jsonl", "when": "when.jsonl", "where": "where.jsonl",
        "define": "define.jsonl", "lists": "lists.jsonl", "asks": "asks.jsonl", "yesno": "yesno.jsonl",
        "why": "why.jsonl", "shelf": "shelf.jsonl", "users2": "users2.jsonl",
        "users3": "users3.jsonl", "users4": "users4.jsonl",
        "users5": "users5.jsonl", "users6": "users6.jsonl", "users7": "users7.jsonl"}


def load_set(name: str) -> list[dict]:
    rows = [json.loads(line) for line in (QUESTIONS / SETS[name]).read_text(encoding="utf-8").splitlines()
            if line.strip()]
    for r in rows:
        r["set"] = name
        r.setdefault("corpus", name if name in ("reports", "shelf") else "obsidian-help")
        r.setdefault("answerable", True)
        if "split" not in r:
            r["split"] = "tune" if int(r["id"].split("-")[-1]) % 2 else "check"
    return [r for r in rows if CORPORA[r["corpus"]].is_dir()]


def check_sets() -> int:
    """Every path exists and every `must` string (normalised), and every `facts` string of the
    users set, is still in its note."""
    bad = 0
    for name in ("multipart", "howto", "keys", "when", "where", "define", "lists", "asks", "yesno", "why"):
        for row in load_set(name):
            parts = row.get("parts") or [{"path": row["path"], "must": row["must"]}]
            for part in parts:
                if not part["path"]:
                    continue
                note = CORPORA[row["corpus"]] / part["path"]
                text = note.read_text(encoding="utf-8") if note.is_file() else ""
                missing = [m for m in part["must"] if not shows(m, text)]
                if not note.is_file() or missing:
                    bad += 1
                    print(f"{row['id']}: {part['path']} {'missing file' if not note.is_file() else missing}")
    for row in (r for name in USERS_SETS for r in load_set(name) if r["answerable"]):  # facts: as is (score)
        note = CORPORA[row["corpus"]] / row["path"]
        text = note.read_text(encoding="utf-8").lower() if note.is_file() else ""
        missing = [f for f in row["facts"] if f.lower() not in text]
        if not note.is_file() or missing:
            bad += 1
            print(f"{row['id']}: {row['path']} {'missing file' if not note.is_file() else missing}")
    print("sets ok" if not bad else f"{bad} problems")
    return 1 if bad else 0


def run_checkout(label: str, code: Path, rows: list[dict], args) -> dict[str, dict]:
    """Answer every row with the ragcli under ``code``, in a child process of its own."""
    work = Path(tempfile.mkdtemp(prefix=f"bench-answers2-{label}-"))
    qfile, out = work / "questions.json", work / "answers.jsonl"
    qfile.write_text(json.dumps([{"id": r["id"], "corpus": r["corpus"], "question": r["question"]} for r in rows]))
    cmd = [sys.executable, str(Path(__file__).resolve().parent / "answer_worker.py"), "--label", label,
           "--homes", str(args.homes), "--questions", str(qfile), "--out", str(out)]
    cmd += [f"--corpus={name}={folder}" for name, folder in CORPORA.items() if folder.is_dir()]
    if args.quotes_only:
        cmd.append("--quotes-only")
    if args.model:
        cmd += ["--model", args.model]
    env = rag_env(args.homes, code)  # converted models shared in benchlib's cache; RAG_HOME set per vault
    print(f"# {label}: {len(rows)} questions with {code}", file=sys.stderr)
    subprocess.run(cmd, env=env, cwd=str(args.homes), check=True)
    return {r["id"]: r for r in map(json.loads, out.read_text(encoding="utf-8").splitlines())}


def describe(code: Path) -> str:
    """The checkout's folder and commit ("+" when its tree has uncommitted changes)."""
    git = ["git", "-C", str(code)]
    rev = subprocess.run(git + ["rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    dirty = subprocess.run(git + ["status", "--porcelain", "--", "ragcli"], capture_output=True, text=True).stdout
    return f"{code.resolve().name}@{rev or '?'}{'+' if dirty.strip() else ''}"


def mean(values) -> float | None:
    values = [float(v) for v in values if v is not None]
    return sum(values) / len(values) if values else None


def median(values) -> float | None:
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def summarize(label: str, name: str, scored: list[dict]) -> dict:
    ans = [s for s in scored if s["answerable"]]
    una = [s for s in scored if not s["answerable"]]
    got = [s for s in ans if not s["refused"]]
    answered_all = [s for s in scored if not s["refused"]]

    def m(key, rows=got):
        return mean(s.get(key) for s in rows)

    def over_all(key):  # a refused question shows no part and no block: it counts as 0
        return mean(float(s.get(key) or 0.0) for s in ans) if any(key in s for s in ans) else None
    return {
        "set": name, "code": label, "n": len(scored),
        "refused": f"{len(ans) - len(got)}/{len(ans)}" if ans else "-",
        "unans_answered": f"{len(una) - sum(s['refused'] for s in una)}/{len(una)}" if una else "-",
        "hedged": f"{sum(bool(s.get('hedged')) for s in got)}/{len(got)}" if got else "-",
        "unans_plain": f"{sum(not s['refused'] and not s.get('hedged') for s in una)}/{len(una)}" if una else "-",
        "recall": m("recall"),
        "recall_all": mean((s.get("recall") if not s["refused"] else 0.0) for s in ans if "recall" in s),
        "must": over_all("must"), "block": over_all("block_whole"), "parts": over_all("parts"),
        "all_parts": over_all("all_parts"), "facts": m("facts"), "note": over_all("note_shown"),
        "words": m("words_read"), "repeats": m("repeats"),
        "support": mean(s["support"] for s in answered_all),
        "invented": sum(bool(s["invented"]) for s in answered_all),
        "quote_p50": median(s["first_quote_s"] for s in scored),
        "total_p50": median(s["total_s"] for s in scored),
    }


COLUMNS = ["set", "code", "n", "refused", "unans_answered", "hedged", "unans_plain", "recall", "recall_all", "must",
           "block", "parts", "all_parts", "facts", "note", "words", "repeats", "support", "invented", "quote_p50",
           "total_p50"]


def fmt(v) -> str:
    if v is None:
        return "-"
    if isinstance(v, float):
        return f"{v:.0f}" if v >= 10 else f"{v:.3f}" if v < 1 else f"{v:.2f}"
    return str(v)


def _copy_examples() -> None:
    """This checkout's examples/vault at ``EXAMPLES``, file times kept (an unchanged note is not
    re-indexed)."""
    shutil.rmtree(EXAMPLES, ignore_errors=True)
    shutil.copytree(ROOT / "examples" / "vault", EXAMPLES)


def _copy_reports(pattern: str, name: str = "reports") -> None:
    """The reports the question set ``name`` asks about (matching ``pattern``), alone in its folder."""
    long = SHARED / "corpora" / "pdfs-long"
    if not long.is_dir():
        return
    folder = CORPORA[name]
    wanted = {json.loads(line)["file"] for line in (QUESTIONS / SETS[name]).read_text().splitlines()
              if line.strip()}
    wanted = {file for file in wanted if fnmatch.fnmatch(file, pattern)}
    folder.mkdir(exist_ok=True)
    for old in folder.glob("*.pdf"):
        if old.name not in wanted:
            old.unlink()  # a narrower run must not index the others
    for file in sorted(wanted):
        if not (folder / file).exists():
            shutil.copyfile(long / file, folder / file)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--set", action="append", choices=sorted(SETS), help="repeat; default: every set")
    ap.add_argument("--split", choices=["tune", "check"])
    ap.add_argument("--baseline", type=Path, help="a second checkout (e.g. today's main), run the same way")
    ap.add_argument("--code", type=Path, default=ROOT, help="the checkout measured (default: this one)")
    ap.add_argument("--quotes-only", action="store_true", help="no model: the evidence alone (fast)")
    ap.add_argument("--model", help="llm_model for generation (default: the configured one)")
    ap.add_argument("--homes", type=Path, default=Path(tempfile.gettempdir()) / "ragcli-bench-answers2",
                    help="where each corpus is indexed on first use and reused after")
    ap.add_argument("--limit", type=int, help="first N questions of each set")
    ap.add_argument("--only", action="append", default=[], help="only this question id (repeat)")
    ap.add_argument("--show", action="append", default=[], help="print what each checkout showed for this id")
    ap.add_argument("--json", type=Path, help="write every per-question figure and output here")
    ap.add_argument("--check-sets", action="store_true", help="only check the sets against the notes")
    ap.add_argument("--rescore", type=Path, help="score the outputs saved by an earlier --json run (no pipeline)")
    ap.add_argument("--report-files", default="*", help="reports set: only the questions on reports matching this glob")
    args = ap.parse_args()
    if args.check_sets:
        raise SystemExit(check_sets())
    names = args.set or list(SETS)
    _copy_examples()
    for name in {"reports", "shelf"} & set(names):
        _copy_reports(args.report_files, name)
    rows = []
    for name in names:
        chosen = [r for r in load_set(name) if not args.split or r["split"] == args.split]
        chosen = [r for r in chosen if fnmatch.fnmatch(r.get("file", ""), args.report_files)] \
            if name in ("reports", "shelf") else chosen
        chosen = [r for r in chosen if r["id"] in args.only] if args.only else chosen
        rows += chosen[: args.limit] if args.limit else chosen
    args.homes.mkdir(parents=True, exist_ok=True)
    checkouts = [(describe(args.code), args.code.resolve())]
    if args.baseline:
        checkouts.insert(0, (describe(args.baseline), args.baseline.resolve()))
    print(f"# {len(rows)} questions ({', '.join(names)}{', ' + args.split if args.split else ''}); "
          f"{'rescored' if args.rescore else 'quotes only' if args.quotes_only else 'with the model'}; "
          f"load {os.getloadavg()[0]:.1f}")
    table, dump = [], {}
    saved = json.loads(args.rescore.read_text())["runs"] if args.rescore else None
    if saved:
        checkouts = [(label, Path(run["code"])) for label, run in saved.items()]
        rows = [r for r in rows if all(r["id"] in run["records"] for run in saved.values())]
        names = [n for n in names if any(r["set"] == n for r in rows)]
    for label, code in checkouts:
        records = saved[label]["records"] if saved else run_checkout(label, code, rows, args)
        scored = {r["id"]: score(r, records[r["id"]]) for r in rows}
        for name in names:
            table.append(summarize(label, name, [scored[r["id"]] for r in rows if r["set"] == name]))
        dump[label] = {"code": str(code), "scores": scored, "records": records}
        for qid in args.show:
            rec = records.get(qid)
            if rec:
                print(f"\n## {label} {qid}: {next(r['question'] for r in rows if r['id'] == qid)}\n{rec['stdout']}"
                      f"{rec['stderr']}")
    print("| " + " | ".join(COLUMNS) + " |")
    print("|" + "---|" * len(COLUMNS))
    order = [label for label, _ in checkouts]  # the baseline first, as in a before/after table
    for line in sorted(table, key=lambda t: (names.index(t["set"]), order.index(t["code"]))):
        print("| " + " | ".join(fmt(line[c]) for c in COLUMNS) + " |")
    if args.json:
        args.json.write_text(json.dumps({"summary": table, "runs": dump}, ensure_ascii=False, indent=1))


if __name__ == "__main__":
    main()
