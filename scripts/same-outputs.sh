#!/bin/sh
# scripts/same-outputs.sh [REV] [full]: builds revision REV (default: the
# one in .ci/outputs-base, the last commit whose outputs are the reference)
# in a scratch folder, runs scripts/outputs.sh with it and with the working
# tree's build/fabricsim, and diffs the two. Exit 0 when every run gave the
# same bytes; 1 with the runs that differ (and the first lines of each
# difference). A change meant to keep every output (a redesign, a speed-up)
# must pass it; a change meant to alter outputs moves .ci/outputs-base to
# its own commit once reviewed.
set -eu
cd "$(dirname "$0")/.."
REV=${1:-$(cat .ci/outputs-base)}
FULL=${2:-}
tmp=$(mktemp -d /tmp/fabricsim-same-XXXXXX)
trap 'rm -rf "$tmp"' EXIT INT TERM
echo "same-outputs: building $REV in $tmp/base"
mkdir -p "$tmp/base"
git archive "$REV" | tar -x -C "$tmp/base"
make -C "$tmp/base" -j2 build/fabricsim >"$tmp/build.log" 2>&1 || {
  tail -20 "$tmp/build.log"
  exit 1
}
make -j2 build/fabricsim >/dev/null
echo "same-outputs: running the base"
scripts/outputs.sh "$tmp/base/build/fabricsim" "$tmp/a" $FULL
echo "same-outputs: running the working tree"
scripts/outputs.sh build/fabricsim "$tmp/b" $FULL
if diff -r "$tmp/a" "$tmp/b" >"$tmp/diff"; then
  echo "same-outputs: every run byte-identical to $REV ($(ls "$tmp/a" | wc -l) runs)"
  exit 0
fi
echo "same-outputs: runs that differ from $REV:"
grep '^diff ' "$tmp/diff" | sed "s|$tmp/a/||; s| $tmp/b/.*||; s|^diff -r |  |"
grep '^Only in' "$tmp/diff" | sed "s|$tmp/||g; s|^|  |" || true
head -40 "$tmp/diff"
exit 1
