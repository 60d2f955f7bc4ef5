#!/usr/bin/env bash
# Runs lsnn's hostile calls (cases.R), each in its own R process with a
# 60 s limit, against the installed lsnn, then summarises them:
#   bash tools/hostile/run.sh            (from the repository root)
# Results and the report go to $HOSTILE_OUT (default /tmp/lsnn-hostile).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
export HOSTILE_OUT="${HOSTILE_OUT:-/tmp/lsnn-hostile}"
mkdir -p "$HOSTILE_OUT/cases" "$HOSTILE_OUT/results"
Rscript -e "source('$here/cases.R')
for (i in seq_along(K)) {
  id <- sprintf('%03d', i)
  writeLines(c(sprintf('source(\"%s/common.R\")', '$here'),
               sprintf('run_case(\"%s\", %s, \"%s\", %s)', id, deparse1(K[[i]]\$code),
                       K[[i]]\$expect, deparse1(K[[i]]\$check))),
             file.path('$HOSTILE_OUT', 'cases', paste0('case_', id, '.R')))
}"
for f in "$HOSTILE_OUT"/cases/case_*.R; do
  id=$(basename "$f" .R); id=${id#case_}
  ( cd /tmp && timeout -s KILL 60 Rscript "$f" > "$HOSTILE_OUT/results/$id.out" \
      2> "$HOSTILE_OUT/results/$id.err" ); echo $? > "$HOSTILE_OUT/results/$id.rc"
done
echo "hostile calls: results in $HOSTILE_OUT/results"
(cd "$HOSTILE_OUT" && Rscript "$here/summarise.R")
