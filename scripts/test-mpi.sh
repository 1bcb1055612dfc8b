#!/bin/sh
# Builds fabricsim with MPI (make MPI=1) and runs a small sweep on 3 ranks:
# its table must equal the single-process run's (wall times aside).
set -eu
cd "$(dirname "$0")/.."
make --no-print-directory MPI=1 build-mpi/fabricsim >/dev/null
d=$(mktemp -d /tmp/fabricsim-mpi-XXXXXX)
trap 'rm -rf "$d"' EXIT
cat > "$d/s.json" <<EOS
{"base": "$(pwd)/examples/gpt-13b.json",
 "axes": {"parallelism.tp": [4, 8], "parallelism.pp": [1, 2]}}
EOS
root=""
[ "$(id -u)" = 0 ] && root="--allow-run-as-root"
mpirun $root --oversubscribe -n 3 build-mpi/fabricsim sweep "$d/s.json" --db "$d/m.sqlite" \
  --csv "$d/m.csv" 2>/dev/null
build/fabricsim sweep "$d/s.json" --db "$d/one.sqlite" --csv "$d/one.csv" 2>/dev/null
# drop wall_s (6th column) before comparing (no point fails here, so no
# quoted error text holds a comma)
cut -d, -f1-5,7- "$d/m.csv" > "$d/m.cut"
cut -d, -f1-5,7- "$d/one.csv" > "$d/one.cut"
if ! cmp -s "$d/m.cut" "$d/one.cut"; then
  echo "test-mpi: the 3-rank sweep differs from the single-process one" >&2
  diff "$d/m.cut" "$d/one.cut" >&2 || true
  exit 1
fi
echo "test-mpi: 3 ranks = 1 process ($(($(wc -l < "$d/m.csv") - 1)) points)"
