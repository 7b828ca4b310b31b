"""cProfile of one `rag ARGS` in process (main thread); stats to argv[1], top lines printed."""
import cProfile
import pstats
import sys

from ragcli.cli import main

out, args = sys.argv[1], sys.argv[2:]
profile = cProfile.Profile()
profile.enable()
code = main(args)
profile.disable()
profile.dump_stats(out)
stats = pstats.Stats(out)
stats.sort_stats("cumtime").print_stats(40)
stats.sort_stats("tottime").print_stats(25)
sys.exit(code)
