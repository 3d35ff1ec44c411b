#!/usr/bin/env bash
# deps.sh - installs the Debian packages relayout builds and tests with, if missing
# Sourced by demo.sh and test.sh. As root it runs apt-get; otherwise it prints
# the line to run and fails.
deps_packages="cmake make gcc libc6-dev pkg-config clang-format ocl-icd-opencl-dev opencl-headers pocl-opencl-icd libjansson-dev libjpeg62-turbo-dev libpng-dev libdnnl-dev python3-numpy python3-venv python3-pytest librsvg2-bin libopenmpi-dev openmpi-bin"

deps_missing() {
  local p missing=""
  for p in $deps_packages; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
      missing="$missing $p"
  done
  echo "$missing"
}

deps_install() {
  local missing
  missing=$(deps_missing)
  [ -z "$missing" ] && return 0
  if [ "$(id -u)" = 0 ]; then
    echo "relayout: installing$missing" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq && apt-get install -y -qq --no-install-recommends $missing >/dev/null
  else
    echo "relayout: missing Debian packages:$missing" >&2
    echo "run: sudo apt-get update && sudo apt-get install -y$missing" >&2
    return 1
  fi
}
