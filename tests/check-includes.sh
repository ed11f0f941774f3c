#!/usr/bin/env bash
# The rooms' arrows as a build fact (docs/HACKING.md, "Rooms"): every
# project include names its room ("audit/chain.h"), and a room includes
# only itself and the rooms below it:
#
#   cli → run → {sandbox, net, fusefs, undo} → {audit, policy} → common
#
# (fusefs → audit is allowed, audit → fusefs is not; sandbox takes only
# common, since it links no glib.) No room includes another room's
# *-private.h. tests/ and bench/ may include anything: white-box tests
# read private headers on purpose. glib, GIO and json-glib are refused in
# sandbox/ and common/ (the sandbox target does not link them either, so
# this only names the line before the compiler does).
#
# Run by ctest as unit/check-includes; by hand: tests/check-includes.sh [SRCDIR].
set -u
cd "${1:-${VR_SOURCE_DIR:-$(dirname "$0")/..}}" || exit 2

declare -A below=(
	[common]=""
	[policy]="common"
	[audit]="common"
	[fusefs]="audit policy common"
	[sandbox]="common"
	[net]="audit policy common"
	[undo]="audit policy common"
	[run]="sandbox net fusefs undo audit policy common"
	[cli]="run sandbox net fusefs undo audit policy common"
)

bad=0
refuse() { echo "check-includes: $1: $2"; bad=1; }

for room in "${!below[@]}"; do
	[ -d "$room" ] || { refuse "$room/" "the room is missing"; continue; }
	for f in "$room"/*.[ch]; do
		[ -e "$f" ] || continue
		n=0
		while IFS= read -r line; do
			n=$((n + 1))
			case "$line" in
			*'#'*include*) ;;
			*) continue ;;
			esac
			if [[ $line =~ ^[[:space:]]*#[[:space:]]*include[[:space:]]*\"([^\"]+)\" ]]; then
				inc=${BASH_REMATCH[1]}
				if [[ $inc != */* ]]; then
					refuse "$f:$n" "\"$inc\": name the room (\"$room/$inc\")"
					continue
				fi
				to=${inc%%/*}
				if [ -z "${below[$to]+x}" ]; then
					refuse "$f:$n" "\"$inc\": $to/ is not a room"
				elif [ "$to" != "$room" ] && [[ " ${below[$room]} " != *" $to "* ]]; then
					refuse "$f:$n" "\"$inc\": $room/ may not include $to/ (the arrows point cli → run → {sandbox, net, fusefs, undo} → {audit, policy} → common)"
				elif [ "$to" != "$room" ] && [[ $inc == *-private.h ]]; then
					refuse "$f:$n" "\"$inc\" is private to $to/"
				elif [ ! -e "$inc" ]; then
					refuse "$f:$n" "\"$inc\" does not exist"
				fi
			elif [[ $room == sandbox || $room == common ]] &&
				[[ $line =~ ^[[:space:]]*#[[:space:]]*include[[:space:]]*\<(glib|gio|json-glib|gobject)[^\>]*\> ]]; then
				refuse "$f:$n" "$room/ links no glib (the sandbox child after clone, and everything it links)"
			fi
		done <"$f"
	done
done

# Nothing is left where the rooms came from.
[ -e launcher ] && refuse "launcher/" "the old folder is back: its files belong in the rooms"

[ "$bad" = 0 ] && echo "check-includes: every include points down the graph"
exit "$bad"
