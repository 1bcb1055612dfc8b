#!/bin/sh
# Loads HTML reports in a real browser (headless Chromium, Debian's
# `chromium`): a report for train (examples/gpt-13b.json), sim
# (examples/demo.json), coll, route, ocs, wan, jobs and a train with an OCS layer. Each page must load with no
# console message at error level, run its one inline script (the DOM
# dump carries data-report="ok") and give a screenshot that is not blank
# (a PNG of some size whose pixels are not all one colour: many distinct
# bytes), and neither the page nor a table in it may be wider than an 800
# or a 1,400 px window. The checks are first shown to reject a page with a console
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

# browse NAME HTML: a screenshot, the DOM after scripts ran and the log at
# 1,400 px, and the DOM at 800 px (a narrow window).
browse() {
  prof="$DIR/profile-$1" # a fresh profile each time: nothing shared
  timeout 120 "$BROWSER" --headless=new --no-sandbox --disable-gpu --no-first-run \
    --user-data-dir="$prof" --enable-logging=stderr --v=0 \
    --window-size=1400,2000 --screenshot="$DIR/$1.png" "file://$2" \
    >/dev/null 2>"$DIR/$1.log" || true
  for w in 1400 800; do
    timeout 120 "$BROWSER" --headless=new --no-sandbox --disable-gpu --no-first-run \
      --user-data-dir="$prof" --enable-logging=stderr --v=0 --window-size=$w,2000 \
      --dump-dom "file://$2" >"$DIR/$1.$w.dom" 2>>"$DIR/$1.log" || true
  done
}

# verdict NAME: prints why the page fails, nothing if it passes. Chromium
# logs every console message, whatever its level, as a line
# `...:INFO:CONSOLE(LINE)] "MESSAGE", source: URL`; a report's only script
# logs nothing, so any such line (console.error, an uncaught exception)
# fails it.
verdict() {
  if grep -q 'CONSOLE' "$DIR/$1.log" 2>/dev/null; then
    echo "console message: $(grep 'CONSOLE' "$DIR/$1.log" | head -1 | cut -c1-200)"
  elif ! grep -q 'data-report="ok"' "$DIR/$1.1400.dom" 2>/dev/null; then
    echo "the page's script did not run (no data-report=\"ok\" in the DOM)"
  elif [ ! -s "$DIR/$1.png" ]; then
    echo "no screenshot"
  else
    size=$(wc -c <"$DIR/$1.png")
    distinct=$(od -An -v -tu1 "$DIR/$1.png" | tr -s ' ' '\n' | sort -u | wc -l)
    if [ "$size" -lt 20000 ] || [ "$distinct" -lt 200 ]; then
      echo "blank-looking screenshot ($size bytes, $distinct distinct byte values)"
      return
    fi
    # the page's script records what is wider than the window: "page+" if
    # the page scrolls sideways, then how many tables scroll in their box
    for w in 1400 800; do
      over=$(sed -n 's/.*data-overflow="\([^"]*\)".*/\1/p' "$DIR/$1.$w.dom" | head -1)
      if [ "$over" != "0" ]; then
        echo "wider than a $w px window (data-overflow=\"$over\")"
        return
      fi
    done
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
# a real report with a 1,200 px wide table in it: too wide for 800 px
"$BIN" ocs schedule --matrix examples/ocs-job.json --report "$DIR/bad-wide.html" >/dev/null
sed -i 's|<h2>|<div style="overflow-x:auto"><table><tr><td><p style="width:1200px">wide</p></td></tr></table></div><h2>|' "$DIR/bad-wide.html"
for bad in bad-console bad-blank bad-wide; do
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
check train-ocs train examples/gpt-13b-ocs.json --no-compare
check sim sim examples/demo.json --summary
check coll coll --op allreduce --ranks 16 --topo fattree:k=4 --size 1K:64M
check route route --jobs examples/jobs-4dp.json --optimizer greedy,ecmp,spray \
  --topo leafspine:leaves=8,spines=8,hosts_per_leaf=8,host_gbps=400,fabric_gbps=400
check ocs ocs schedule --matrix examples/ocs-job.json
check ocs-sweep ocs schedule --matrix examples/ocs-job.json --sweep
check coll-large coll --op allreduce --ranks 128 --topo fattree:k=8 --size 1M:4M
check wan wan train examples/wan-4dc.json --cut east-central
check wan-dynamic wan dynamic examples/wan-erlang-link.json --loads 4:20:4 --requests 20000
check jobs jobs examples/jobs-trace-small.json --scheduler all

echo "test-report: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
