# bash completion for sessiondb: verbs, their options, the values an option
# takes (--format, --mode...), files and folders where a verb takes one, and
# session ids. All of it comes from the program itself (`sessiondb __complete`,
# docs/cli.md), so it never drifts from it; the lists below are what is left
# when that program cannot be run. The verbs are those `sessiondb --help` lists
# (tests/cli/install_test.cc and completion_cli_test.cc check both).

# Asks the program for the candidates of word CWORD of WORDS (the arguments:
# CWORD, then the words); false when it cannot answer (not installed, or too
# old to know __complete).
_sessiondb_ask() {
  local cword=$1
  shift
  local words=("$@") answer line files=""
  answer=$("${words[0]}" __complete -- "${words[@]:1:cword}" 2>/dev/null) || return 1
  COMPREPLY=()
  while IFS= read -r line; do
    case "$line" in
      "") ;;
      :files) files=f ;;
      :dirs) files=d ;;
      *) COMPREPLY+=("${line%%$'\t'*}") ;;
    esac
  done <<<"$answer"
  if [[ -n "$files" ]]; then
    compopt -o filenames 2>/dev/null
    local cur="${words[cword]}"
    if [[ "$files" == d ]]; then
      COMPREPLY+=($(compgen -d -- "$cur"))
    else
      COMPREPLY+=($(compgen -f -- "$cur"))
    fi
  fi
  return 0
}

_sessiondb() {
  local cur prev words cword
  if declare -F _get_comp_words_by_ref >/dev/null 2>&1; then
    # bash-completion's: "--store=DIR" and "postgresql://..." stay one word.
    _get_comp_words_by_ref -n =: cur prev words cword
  else
    cur="${COMP_WORDS[COMP_CWORD]}"
    prev="${COMP_WORDS[COMP_CWORD-1]}"
    words=("${COMP_WORDS[@]}")
    cword=$COMP_CWORD
  fi

  _sessiondb_ask "$cword" "${words[@]}" && return

  local verbs="init new ls rename archive unarchive purge active append show fork events
    compact prune rewind file-history restore blame view usage drafts project import export gc verify stats copy sync redact rm
    trash erase ledger retain key encrypt decrypt search
    reindex recall churn hook serve mcp demo open version"
  local globals="--store --namespace --json --no-pager --fast --max-image-bytes
    --max-file-bytes --max-images --key-file --help --version"

  case "$prev" in
    --store)
      COMPREPLY=($(compgen -d -- "$cur"))
      return
      ;;
    --key-file)
      COMPREPLY=($(compgen -f -- "$cur"))
      return
      ;;
    --namespace | --max-image-bytes | --max-file-bytes | --max-images)
      return
      ;;
  esac

  # The verb: the first word that is neither an option nor an option's value.
  local i verb="" after=""
  for ((i = 1; i < cword; i++)); do
    case "${words[i]}" in
      --store | --namespace | --max-image-bytes | --max-file-bytes | --max-images | --key-file) ((i++)) ;;
      -*) ;;
      *)
        if [[ -z "$verb" ]]; then
          verb="${words[i]}"
        else
          after+="${words[i]} "
        fi
        ;;
    esac
  done

  if [[ -z "$verb" ]]; then
    if [[ "$cur" == -* ]]; then
      COMPREPLY=($(compgen -W "$globals" -- "$cur"))
    else
      COMPREPLY=($(compgen -W "$verbs" -- "$cur"))
    fi
    return
  fi
  if [[ "$cur" == -* ]]; then
    COMPREPLY=($(compgen -W "$globals" -- "$cur"))
    return
  fi
  case "$verb" in
    hook)
      case "$after" in
        "") COMPREPLY=($(compgen -W "claude-code install uninstall" -- "$cur")) ;;
        "install " | "uninstall ") COMPREPLY=($(compgen -W "claude-code" -- "$cur")) ;;
      esac
      ;;
    import | append | recall | export | file-history | restore | blame)
      COMPREPLY=($(compgen -f -- "$cur"))
      ;;
  esac
}

complete -F _sessiondb sessiondb
