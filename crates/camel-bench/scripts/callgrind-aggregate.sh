#!/usr/bin/env bash
# Instructions per exchange of the in-memory aggregate, ours and the hand-written baseline,
# under callgrind. Each side runs with 50,000 and 100,000 exchanges and the difference is
# divided by 50,000, so setup and teardown cancel out.
#
#   cargo build --profile bench -p camel-bench --bin aggregate   # release with line tables, in target/release
#   crates/camel-bench/scripts/callgrind-aggregate.sh [BINARY]
set -euo pipefail
bin=${1:-target/release/aggregate}
out=$(mktemp -d)
for side in ours baseline; do
  for n in 50000 100000; do
    AGGREGATE_SIDE=$side AGGREGATE_EXCHANGES=$n \
      valgrind --tool=callgrind --callgrind-out-file="$out/$side.$n" "$bin" >/dev/null 2>&1
  done
  small=$(awk '/^summary:/ {print $2}' "$out/$side.50000")
  large=$(awk '/^summary:/ {print $2}' "$out/$side.100000")
  echo "aggregate $side: $(( (large - small) / 50000 )) instructions per exchange"
done
echo "profiles in $out (callgrind_annotate --inclusive=yes $out/ours.100000)"
