#!/usr/bin/env python3
"""compare-verdicts.py: two runs of bench/search-suite.sh side by side.

    python3 bench/compare-verdicts.py DIR1 DIR2

For each task in both output directories: the champion of each run (its
parameters and fitness) and the held-out gate's verdict, and whether the
verdicts agree. The gate's verdict for a champion must not flip with timing
noise; a different champion between runs is not a defect by itself (the
search's decisions follow its measurements). Exits 1 when a verdict
differs.
"""
import json
import os
import sys


def champion(run):
    path = os.path.join(run, "summary.json")
    try:
        s = json.load(open(path))
    except (OSError, ValueError):
        return None
    c = s.get("champion") or {}
    if not c:
        return {"verdict": "none", "params": None, "fitness": None}
    gate = c.get("gate") or {}
    return {"verdict": "passed" if gate.get("passed") else "failed",
            "params": c.get("params"), "fitness": c.get("fitness")}


def main(argv):
    if len(argv) != 3:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    a, b = argv[1], argv[2]
    tasks = sorted(set(os.listdir(a)) & set(os.listdir(b)))
    differ = compared = 0
    print("%-14s %-8s %-8s %-5s %s" % ("task", "run 1", "run 2", "same",
                                       "champions"))
    for t in tasks:
        x, y = champion(os.path.join(a, t)), champion(os.path.join(b, t))
        if x is None or y is None:
            continue
        same = x["verdict"] == y["verdict"]
        differ += not same
        compared += 1
        print("%-14s %-8s %-8s %-5s %s %s / %s %s" % (
            t, x["verdict"], y["verdict"], "yes" if same else "NO",
            x["params"], x["fitness"], y["params"], y["fitness"]))
    print("%d of %d verdicts differ" % (differ, compared))
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
