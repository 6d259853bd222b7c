# bash completion for sessiondb: its verbs and global options.
# The verbs are those `sessiondb --help` lists (tests/cli/install_test.cc checks it).

_sessiondb() {
  local cur prev words cword
  if declare -F _init_completion >/dev/null 2>&1; then
    _init_completion || return
  else
    cur="${COMP_WORDS[COMP_CWORD]}"
    prev="${COMP_WORDS[COMP_CWORD-1]}"
    words=("${COMP_WORDS[@]}")
    cword=$COMP_CWORD
  fi

  local verbs="init new ls rename archive unarchive purge active append show fork events
    compact prune rewind view usage drafts project import export gc verify stats copy sync redact rm
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
    import | append | recall | export)
      COMPREPLY=($(compgen -f -- "$cur"))
      ;;
  esac
}

complete -F _sessiondb sessiondb
