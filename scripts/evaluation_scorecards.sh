#!/bin/sh
# Regenerates the scorecards committed under docs/evaluation/ (docs/evaluation/README.md):
# the quick battery for every algorithm there, and the full battery for each (one process:
# about 15 s and 160 s per algorithm on two shared cores). Usage: scripts/evaluation_scorecards.sh
# [quick|full|both] from the repository root, with tfrclab importable.
set -eu
what=${1:-both}
PYTHON=${PYTHON:-python}
run() {  # run PLAN NAME ALGO
    plan=$1 name=$2 algo=$3
    if [ "$plan" = quick ]; then flag=--quick; else flag=; fi
    $PYTHON -m tfrclab evaluate "$algo" $flag --quiet --out "docs/evaluation/$plan/$name"
}
for plan in quick full; do
    [ "$what" = both ] || [ "$what" = "$plan" ] || continue
    run "$plan" tfrc-rfc5348 tfrc:preset=rfc5348
    run "$plan" tfrc-floyd2000 tfrc:preset=floyd2000
    run "$plan" gaimd-0.31-0.875 gaimd:alpha=0.31,beta=0.875
    run "$plan" tear tear
    run "$plan" rap rap
    run "$plan" tcp-cubic tcp:variant=cubic
done
