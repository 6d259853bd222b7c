#!/usr/bin/env bash
# The main job on the embedded default, for now: store a conversation with a
# pasted image in a throw-away store and show it back, image included; then
# what an agent harness does with it (projection, fork, compaction).
# Usage: scripts/demo.sh [path/to/sessiondb]
set -euo pipefail
SDB=${1:-build/sessiondb}
STORE=$(mktemp -d)/demo-store
trap 'rm -rf "$(dirname "$STORE")"' EXIT
export SESSIONDB_STORE=$STORE

# A 2x2 PNG, as a chat app would receive it pasted from the clipboard.
IMG=$(dirname "$STORE")/pasted.png
printf '\x89\x50\x4e\x47\x0d\x0a\x1a\x0a\x00\x00\x00\x0d\x49\x48\x44\x52\x00\x00\x00\x02\x00\x00\x00\x02\x08\x00\x00\x00\x00\x57\xdd\x52\xf8\x00\x00\x00\x0c\x49\x44\x41\x54\x78\x9c\x63\x60\xf8\x0f\x84\x00\x06\x00\x01\xff\x93\xd1\xe4\x89\x00\x00\x00\x00\x49\x45\x4e\x44\xae\x42\x60\x82' > "$IMG"

echo "== sessiondb demo: store at $STORE"
"$SDB" init
SID=$("$SDB" new --title "Demo: what is in this picture?" --json | sed -n 's/.*"id": *"\([^"]*\)".*/\1/p' | head -n1)
"$SDB" append "$SID" --role system "You are a helpful assistant."
"$SDB" append "$SID" "What is in this picture?" --image "$IMG"
"$SDB" append "$SID" --role assistant "A tiny 2x2 grayscale square."
echo
echo "== sessions"
"$SDB" ls
echo
echo "== the conversation, read back"
"$SDB" show "$SID"
echo
echo "== the image comes back byte for byte"
"$SDB" show "$SID" --json --data-uris \
  | sed -n 's/.*"data_uri": *"data:image\/png;base64,\([^"]*\)".*/\1/p' | head -n1 \
  | base64 -d > "$IMG.back"
cmp "$IMG" "$IMG.back" && echo "read back $(wc -c < "$IMG.back") bytes, identical to the pasted image"
echo
echo "== the request an agent sends (Anthropic shape): the image in full, on its turn"
"$SDB" project "$SID" --format anthropic | cut -c1-300
echo "..."
"$SDB" append "$SID" "And what colour is it?"
echo "== one user turn later, the image is a descriptor, not base64 again"
"$SDB" project "$SID" --format openai-chat | grep -o '\[image [^]]*\]' | head -n1
echo
echo "== a fork: the same history up to seq 3, then its own (nothing copied)"
FORK=$("$SDB" fork "$SID" --at 3 --title "Demo: a different follow-up")
"$SDB" append "$FORK" "Could it be a QR code?"
"$SDB" ls
echo
echo "== a compaction: a summary stands in for seqs 1..3 and admits the image it replaces"
"$SDB" compact "$SID" --from 1 --to 3 --summary "The user showed a tiny grey square." --model demo
"$SDB" events "$SID"
echo
"$SDB" verify
"$SDB" stats
