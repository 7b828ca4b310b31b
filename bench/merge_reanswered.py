"""Before/after for the model bench: main's full run, and the same run with the questions that
showed a model sentence on main re-answered by a branch whose change only rejects more
sentences (so a question that showed none on main shows none on the branch).

Usage: python bench/merge_reanswered.py BASE.json AFTER.json MERGED.json, then
bench_answers2.py --rescore MERGED.json [--split tune|check].
"""
import json
import sys

base_file, after_file, merged_file = sys.argv[1:4]
base = json.load(open(base_file))['runs']
after = json.load(open(after_file))['runs']
(bl, b), = base.items()
(al, a), = after.items()
merged = {**b['records'], **a['records']}
out = {"summary": [], "runs": {bl: {"code": b["code"], "scores": {}, "records": b["records"]},
                               al + "(merged)": {"code": a["code"], "scores": {}, "records": merged}}}
json.dump(out, open(merged_file, 'w'))
for k in a['records']:
    print(k, '| main:', repr(b['records'][k]['answer'][:110]), '\n      sup8:', repr(a['records'][k]['answer'][:110]),
          '| same generation:', b['records'][k]['generated'] == a['records'][k]['generated'])
