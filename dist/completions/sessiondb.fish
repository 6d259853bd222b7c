# fish completion for sessiondb: verbs and global options (below), and after
# the verb, from the program itself (`sessiondb __complete`, docs/cli.md), so
# that they never drift from it: the verb's options, the values an option
# takes (--format, --mode...), files and folders where it takes one, and
# session ids. The verbs are those `sessiondb --help` lists
# (tests/cli/install_test.cc and completion_cli_test.cc check both).

set -l verbs init new ls rename archive unarchive purge active append show fork events \
    compact prune rewind file-history restore blame view usage drafts project import export gc verify stats copy sync redact rm \
    trash erase ledger retain key encrypt decrypt search \
    reindex recall churn hook serve mcp demo open version

complete -c sessiondb -f
complete -c sessiondb -l store -r -F -d 'Store directory or postgresql:// URI'
complete -c sessiondb -l namespace -x -d 'PostgreSQL namespace'
complete -c sessiondb -l json -d 'Print one JSON document'
complete -c sessiondb -l no-pager -d 'Never page long output'
complete -c sessiondb -l fast -d 'Do not fsync before an append returns'
complete -c sessiondb -l max-image-bytes -x -d 'Largest image accepted'
complete -c sessiondb -l max-file-bytes -x -d 'Largest non-image attachment accepted'
complete -c sessiondb -l max-images -x -d 'Most images per message'
complete -c sessiondb -l key-file -r -F -d 'The master key of an encrypted store'
complete -c sessiondb -l help -d 'Print help'
complete -c sessiondb -l version -d 'Print the version and exit'

complete -c sessiondb -n "not __fish_seen_subcommand_from $verbs" -a init -d 'Create the store if needed'
complete -c sessiondb -n "not __fish_seen_subcommand_from $verbs" -a new -d 'Create a session and print its id'
complete -c sessiondb -n "not __fish_seen_subcommand_from $verbs" -a ls -d 'List sessions'
complete -c sessiondb -n "not __fish_seen_subcommand_from $verbs" -a rename -d "Set a session's title"
complete -c sessiondb -n "not __fish_seen_subcommand_from $verbs" -a archive -d 'Archive a session'
complete -c sessiondb -n "not __fish_seen_subcommand_from $verbs" -a unarchive -d 'Bring an archived session back'
complete -c sessiondb -n "not __fish_seen_subcommand_from $verbs" -a purge -d 'Delete old archived sessions'
complete -c sessiondb -n "not __fish_seen_subcommand_from $verbs" -a active -d 'Print, set or clear the active session'
complete -c sessiondb -n "not __fish_seen_subcommand_from $verbs" -a append -d 'Append a message to a session'
complete -c sessiondb -n "not __fish_seen_subcommand_from $verbs" -a show -d "Print a session's messages"
complete -c sessiondb -n "not __fish_seen_subcommand_from $verbs" -a fork -d "Start a session from another's history"
complete -c sessiondb -n "not __fish_seen_subcommand_from $verbs" -a events -d "Print a session's whole log"
complete -c sessiondb -n "not __fish_seen_subcommand_from $verbs" -a compact -d 'Record a summary of a range of events'
complete -c sessiondb -n "not __fish_seen_subcommand_from $verbs" -a prune -d 'Erase the messages a compaction covers'
complete -c sessiondb -n "not __fish_seen_subcommand_from $verbs" -a rewind -d "End a session's view at a seq"
complete -c sessiondb -n "not __fish_seen_subcommand_from $verbs" -a file-history -d 'Every version of a file the agents wrote'
complete -c sessiondb -n "not __fish_seen_subcommand_from $verbs" -a restore -d 'Write a recorded version of a file back'
complete -c sessiondb -n "not __fish_seen_subcommand_from $verbs" -a blame -d 'Each line of a file with the tool call that last wrote it'
complete -c sessiondb -n "not __fish_seen_subcommand_from $verbs" -a view -d 'Record a resource view'
complete -c sessiondb -n "not __fish_seen_subcommand_from $verbs" -a usage -d "Token totals of a session's turns"
complete -c sessiondb -n "not __fish_seen_subcommand_from $verbs" -a drafts -d "List a session's unfinished drafts"
complete -c sessiondb -n "not __fish_seen_subcommand_from $verbs" -a project -d 'Print the provider request messages'
complete -c sessiondb -n "not __fish_seen_subcommand_from $verbs" -a import -d 'Bring in histories from other tools'
complete -c sessiondb -n "not __fish_seen_subcommand_from $verbs" -a export -d 'Write sessions out in another format'
complete -c sessiondb -n "not __fish_seen_subcommand_from $verbs" -a gc -d 'Delete blobs no message refers to'
complete -c sessiondb -n "not __fish_seen_subcommand_from $verbs" -a verify -d 'Check the database and every blob'
complete -c sessiondb -n "not __fish_seen_subcommand_from $verbs" -a stats -d 'Counts and bytes on disk'
complete -c sessiondb -n "not __fish_seen_subcommand_from $verbs" -a copy -d 'Copy a whole store into another'
complete -c sessiondb -n "not __fish_seen_subcommand_from $verbs" -a sync -d 'Sync this store and another, both ways'
complete -c sessiondb -n "not __fish_seen_subcommand_from $verbs" -a redact -d 'List or rewrite stored secrets'
complete -c sessiondb -n "not __fish_seen_subcommand_from $verbs" -a rm -d 'Move a session to the trash, or erase it'
complete -c sessiondb -n "not __fish_seen_subcommand_from $verbs" -a trash -d 'List, restore or empty the trash'
complete -c sessiondb -n "not __fish_seen_subcommand_from $verbs" -a erase -d 'Erase for good, with a receipt'
complete -c sessiondb -n "not __fish_seen_subcommand_from $verbs" -a ledger -d 'What was forgotten, when, by whom'
complete -c sessiondb -n "not __fish_seen_subcommand_from $verbs" -a key -d 'Make, show, rotate or re-key keys'
complete -c sessiondb -n "not __fish_seen_subcommand_from $verbs" -a encrypt -d 'Turn a plaintext store into an encrypted one'
complete -c sessiondb -n "not __fish_seen_subcommand_from $verbs" -a decrypt -d 'Turn an encrypted store back into plaintext'
complete -c sessiondb -n "not __fish_seen_subcommand_from $verbs" -a retain -d 'Show, apply or set the retention policy'
complete -c sessiondb -n "not __fish_seen_subcommand_from $verbs" -a search -d 'Search messages, tool calls, code writes'
complete -c sessiondb -n "not __fish_seen_subcommand_from $verbs" -a reindex -d 'Learn code writes, embed, build the index'
complete -c sessiondb -n "not __fish_seen_subcommand_from $verbs" -a recall -d 'Past code writes most like a file'
complete -c sessiondb -n "not __fish_seen_subcommand_from $verbs" -a churn -d 'Files (or functions) edited most'
complete -c sessiondb -n "not __fish_seen_subcommand_from $verbs" -a hook -d 'Agent hooks (Claude Code)'
complete -c sessiondb -n "not __fish_seen_subcommand_from $verbs" -a serve -d 'Serve the store over HTTP'
complete -c sessiondb -n "not __fish_seen_subcommand_from $verbs" -a mcp -d 'Serve the store to agents over MCP'
complete -c sessiondb -n "not __fish_seen_subcommand_from $verbs" -a demo -d 'List or remove the demo sessions'
complete -c sessiondb -n "not __fish_seen_subcommand_from $verbs" -a open -d "Print or open a session's page address"
complete -c sessiondb -n "not __fish_seen_subcommand_from $verbs" -a version -d 'Print the version of sessiondb'

# The program's answer for the token under the cursor: "CANDIDATE<TAB>TEXT"
# lines as fish takes them, and ":files" or ":dirs" for file or folder names.
function __sessiondb_complete
    set -l words (commandline -opc)
    set -l current (commandline -ct)
    set -l answer ($words[1] __complete -- $words[2..-1] "$current" 2>/dev/null)
    or return
    for line in $answer
        switch $line
            case :files
                __fish_complete_path $current
            case :dirs
                __fish_complete_directories $current
            case '*'
                printf '%s\n' $line
        end
    end
end

complete -c sessiondb -n "__fish_seen_subcommand_from $verbs" -a '(__sessiondb_complete)'
