#!/usr/bin/env bash
# test_symbols.sh - every symbol the library defines globally carries its
# prefix: relayout_ (the API) or rl_ (internal, shared between its files).
# AddressSanitizer adds its own __odr_asan.NAME markers; those are skipped.
# usage: test_symbols.sh PATH/TO/librelayout.a
set -u
defined=$(nm -g --defined-only "$1" | awk 'NF == 3 {print $3}' | grep -v '^__odr_asan\.')
bad=$(echo "$defined" | grep -vE '^(relayout_|rl_)')
count=$(echo "$defined" | wc -l)
if [ -n "$bad" ]; then
  echo "symbols without the relayout_ or rl_ prefix:" >&2
  echo "$bad" >&2
  echo "0 passed, 1 failed"
  exit 1
fi
echo "$count symbols checked"
echo "1 passed, 0 failed"
