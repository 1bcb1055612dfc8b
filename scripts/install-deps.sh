#!/bin/sh
# Installs the Debian packages fabricsim needs to build and test, when they
# are missing. Safe to run again: it installs nothing that is present.
set -eu

need=""
have_pkg() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }

for pkg in make gcc libcjson-dev libglpk-dev libsqlite3-dev pkg-config libprotobuf-c-dev protobuf-c-compiler; do
  have_pkg "$pkg" || need="$need $pkg"
done
# clang builds the fuzzer (make fuzz) and is the second compiler in CI;
# libclang-rt provides its sanitizer and libFuzzer runtimes. g++ builds
# examples/api-cpp.cc (make api-check: the headers as C++) and, with ns-3
# (and pkg-config to find it), the packet-level validation backend (make
# ns3; fabricsim sim --backend ns3); its checks
# (scripts/ns3-test.sh) and scripts/validate.sh do their arithmetic in
# python3.
if [ "${FABRICSIM_MINIMAL:-0}" != 1 ]; then
  for pkg in clang libclang-rt-dev g++ pkg-config libns3-dev python3; do
    have_pkg "$pkg" || need="$need $pkg"
  done
fi

# Chromium (headless) loads the HTML reports in scripts/test-report.sh;
# CI asks for it.
if [ "${FABRICSIM_BROWSER:-0}" = 1 ]; then
  have_pkg chromium || need="$need chromium"
fi

# OpenMPI for `make MPI=1` (sweeps across machines); CI asks for it.
if [ "${FABRICSIM_MPI:-0}" = 1 ]; then
  for pkg in libopenmpi-dev openmpi-bin; do
    have_pkg "$pkg" || need="$need $pkg"
  done
fi

if [ -z "$need" ]; then
  exit 0
fi

echo "install-deps: installing:$need" >&2
SUDO=""
if [ "$(id -u)" != 0 ]; then
  if command -v sudo >/dev/null 2>&1; then SUDO=sudo; else
    echo "install-deps: need root (or sudo) to install:$need" >&2
    exit 1
  fi
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq || echo "install-deps: apt-get update failed; trying the cached lists" >&2
# shellcheck disable=SC2086
$SUDO apt-get install -y -qq --no-install-recommends $need >/dev/null
