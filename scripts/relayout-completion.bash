# relayout-completion.bash - bash completion for relayout: its commands,
# each command's options (read from its own --help, so they follow the
# command), layout names after --from, --to and explain (read from
# 'relayout formats'), dtypes, devices, and files. Installed by 'cmake
# --install' into share/bash-completion/completions/relayout.

# The commands 'relayout --help' lists.
_relayout_commands() {
  "$1" --help 2>/dev/null | sed -n '/^commands:/,/^$/s/^  \([a-z]*\) .*/\1/p'
}

# The named formats and their aliases, as 'relayout formats' lists them.
_relayout_formats() {
  "$1" formats 2>/dev/null | sed -n '2,/^$/p' |
    awk 'NF { print $1; if ($2 != "-") { gsub(",", " ", $2); print $2 } }'
}

_relayout() {
  local r=${COMP_WORDS[0]} cur=${COMP_WORDS[COMP_CWORD]}
  local prev=${COMP_WORDS[COMP_CWORD - 1]} cmd=${COMP_WORDS[1]} words
  if [ "$COMP_CWORD" -eq 1 ]; then
    words="$(_relayout_commands "$r") help --help --version"
  elif [ "$cmd" = help ] && [ "$COMP_CWORD" -eq 2 ]; then
    words=$(_relayout_commands "$r")
  else
    case $prev in
    --from | --to) words=$(_relayout_formats "$r") ;;
    --dtype | --to-dtype)
      words="bool u8 i8 u16 i16 f16 bf16 u32 i32 f32 u64 i64 f64 i4 u4" ;;
    --device | --against) words="auto gpu cpu ref" ;;
    *)
      if [[ $cur == -* ]]; then
        words=$("$r" help "$cmd" 2>/dev/null | grep -o -- '--[a-z][a-z0-9-]*' |
          sort -u)
      elif [ "$cmd" = explain ] && [ "$COMP_CWORD" -eq 2 ]; then
        words=$(_relayout_formats "$r")
      else
        mapfile -t COMPREPLY < <(compgen -f -- "$cur")
        return
      fi
      ;;
    esac
  fi
  mapfile -t COMPREPLY < <(compgen -W "$words" -- "$cur")
}
complete -o filenames -F _relayout relayout
