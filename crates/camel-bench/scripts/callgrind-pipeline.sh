#!/usr/bin/env bash
# Instructions per exchange of one pipeline case, ours and the hand-written baseline, under
# callgrind. Counts do not depend on machine load. Each side runs twice (20,000 and 40,000
# exchanges) and the difference is divided by 20,000, so setup and teardown cancel out.
#
#   cargo build --profile bench -p camel-bench --bin pipeline   # release with line tables, in target/release
#   crates/camel-bench/scripts/callgrind-pipeline.sh [BINARY] [CASE]   # CASE: 10x1 (default), 1x1, 10x64, 1x64
set -euo pipefail
bin=${1:-target/release/pipeline}
case=${2:-10x1}
out=$(mktemp -d)
for side in ours baseline; do
  for n in 20000 40000; do
    PIPELINE_ONLY=$case PIPELINE_SIDE=$side PIPELINE_EXCHANGES=$n \
      valgrind --tool=callgrind --callgrind-out-file="$out/$side.$n" "$bin" >/dev/null 2>&1
  done
  small=$(awk '/^summary:/ {print $2}' "$out/$side.20000")
  large=$(awk '/^summary:/ {print $2}' "$out/$side.40000")
  echo "$case $side: $(( (large - small) / 20000 )) instructions per exchange"
done
echo "profiles in $out (callgrind_annotate --inclusive=yes $out/ours.40000)"
