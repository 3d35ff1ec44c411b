#!/usr/bin/env bash
# test_symbols.sh - every symbol the library defines globally carries its
# prefix: relayout_ (the API) or rl_ (internal, shared between its files);
# the shared library exports the API, every relayout_ symbol, and nothing
# else. AddressSanitizer adds its own __odr_asan.NAME markers; those are
# skipped.
# usage: test_symbols.sh PATH/TO/librelayout.a PATH/TO/librelayout.so
set -u
pass=0 fail=0
defined=$(nm -g --defined-only "$1" | awk 'NF == 3 {print $3}' | grep -v '^__odr_asan\.')
bad=$(echo "$defined" | grep -vE '^(relayout_|rl_)')
if [ -n "$bad" ]; then
  echo "symbols without the relayout_ or rl_ prefix:" >&2
  echo "$bad" >&2
  fail=$((fail + 1))
else
  pass=$((pass + 1))
fi
api=$(echo "$defined" | grep '^relayout_' | sort -u)
exported=$(nm -D --defined-only "$2" | awk 'NF == 3 {print $3}' |
  grep -vE '^(__odr_asan\.|_init$|_fini$|__bss_start$|_edata$|_end$)' | sort -u)
if [ "$api" != "$exported" ]; then
  echo "the shared library's exports differ from the API:" >&2
  diff <(echo "$api") <(echo "$exported") >&2
  fail=$((fail + 1))
else
  pass=$((pass + 1))
fi
echo "$(echo "$defined" | wc -l) symbols checked, $(echo "$exported" | wc -l) exported"
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
