#!/bin/sh
# Loads HTML reports in a real browser (headless Chromium, Debian's
# `chromium`): a report for train (examples/gpt-13b.json), sim
# (examples/demo.json), coll, route and ocs. Each page must load with no
# console message at error level, run its one inline script (the DOM
# dump carries data-report="ok") and give a screenshot that is not blank
# (a PNG of some size whose pixels are not all one colour: many distinct
# bytes). The checks are first shown to reject a page with a console
# error and a blank page. Prints "N passed, N failed"; exits 1 if any
# failed. REPORT_KEEP=DIR keeps the pages and screenshots there.
# Usage: scripts/test-report.sh [BUILD_DIR]   (default build)
set -eu
cd "$(dirname "$0")/.."
BIN="${1:-build}/fabricsim"
BROWSER=""
for b in chromium chromium-browser; do
  if command -v "$b" >/dev/null 2>&1; then BROWSER="$b"; break; fi
done
if [ -z "$BROWSER" ]; then
  echo "test-report: chromium not found (scripts/install-deps.sh installs it)" >&2
  exit 1
fi
DIR="$(mktemp -d /tmp/fabricsim-report-XXXXXX)"
trap 'rm -rf "$DIR"' EXIT
pass=0
fail=0

# browse NAME HTML: a screenshot, the DOM after scripts ran and the log.
browse() {
  prof="$DIR/profile-$1" # a fresh profile each time: nothing shared
  timeout 120 "$BROWSER" --headless=new --no-sandbox --disable-gpu --no-first-run \
    --user-data-dir="$prof" --enable-logging=stderr --v=0 \
    --window-size=1280,2000 --screenshot="$DIR/$1.png" "file://$2" \
    >/dev/null 2>"$DIR/$1.log" || true
  timeout 120 "$BROWSER" --headless=new --no-sandbox --disable-gpu --no-first-run \
    --user-data-dir="$prof" --enable-logging=stderr --v=0 \
    --dump-dom "file://$2" >"$DIR/$1.dom" 2>>"$DIR/$1.log" || true
}

# verdict NAME: prints why the page fails, nothing if it passes. Chromium
# logs every console message, whatever its level, as a line
# `...:INFO:CONSOLE(LINE)] "MESSAGE", source: URL`; a report's only script
# logs nothing, so any such line (console.error, an uncaught exception)
# fails it.
verdict() {
  if grep -q 'CONSOLE' "$DIR/$1.log" 2>/dev/null; then
    echo "console message: $(grep 'CONSOLE' "$DIR/$1.log" | head -1 | cut -c1-200)"
  elif ! grep -q 'data-report="ok"' "$DIR/$1.dom" 2>/dev/null; then
    echo "the page's script did not run (no data-report=\"ok\" in the DOM)"
  elif [ ! -s "$DIR/$1.png" ]; then
    echo "no screenshot"
  else
    size=$(wc -c <"$DIR/$1.png")
    distinct=$(od -An -v -tu1 "$DIR/$1.png" | tr -s ' ' '\n' | sort -u | wc -l)
    if [ "$size" -lt 20000 ] || [ "$distinct" -lt 200 ]; then
      echo "blank-looking screenshot ($size bytes, $distinct distinct byte values)"
    fi
  fi
}

# result OK MESSAGE: counts and prints one outcome (OK: 1 passed, 0 failed).
result() {
  if [ "$1" = 1 ]; then
    echo "ok   $2"
    pass=$((pass + 1))
  else
    echo "FAIL $2" >&2
    fail=$((fail + 1))
  fi
}

# The checker first catches what it must: a console error, a blank page.
printf '<!DOCTYPE html><html><body><p>x</p><script>document.documentElement.setAttribute("data-report","ok");console.error("injected")</script></body></html>\n' >"$DIR/bad-console.html"
printf '<!DOCTYPE html><html><body><script>document.documentElement.setAttribute("data-report","ok")</script></body></html>\n' >"$DIR/bad-blank.html"
for bad in bad-console bad-blank; do
  browse "$bad" "$DIR/$bad.html"
  why=$(verdict "$bad")
  if [ -n "$why" ]; then result 1 "self-check: $bad.html rejected ($why)"
  else result 0 "self-check: $bad.html passed the checks"; fi
done

# check NAME ARGS...: writes DIR/NAME.html with fabricsim ARGS --report
check() {
  name="$1"
  shift
  html="$DIR/$name.html"
  if ! "$BIN" "$@" --report "$html" >"$DIR/$name.out" 2>&1; then
    result 0 "$name: fabricsim $* exited non-zero: $(head -c 300 "$DIR/$name.out")"
    return
  fi
  browse "$name" "$html"
  why=$(verdict "$name")
  if [ -z "$why" ]; then
    result 1 "$name ($(wc -c <"$html") bytes of HTML, $(wc -c <"$DIR/$name.png") bytes of PNG)"
  else
    result 0 "$name: $why"
  fi
  if [ -n "${REPORT_KEEP:-}" ]; then cp "$html" "$DIR/$name.png" "$REPORT_KEEP/" 2>/dev/null || true; fi
}

check train train examples/gpt-13b.json --no-compare
check sim sim examples/demo.json --summary
check coll coll --op allreduce --ranks 16 --topo fattree:k=4 --size 1K:64M
check route route --jobs examples/jobs-4dp.json --optimizer greedy,ecmp,spray \
  --topo leafspine:leaves=8,spines=8,hosts_per_leaf=8,host_gbps=400,fabric_gbps=400
check ocs ocs schedule --matrix examples/ocs-job.json

echo "test-report: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
