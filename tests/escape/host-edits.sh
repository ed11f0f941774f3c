#!/usr/bin/env bash
# Host edits racing the view's caches (docs/view.md, Caching and staleness:
# opens through a stale entry get ESTALE and a fresh lookup; names are seen
# after at most the entry timeout, 1 s by default, where nothing watches the
# directory, at once where the host watch does). During a
# run, the host renames a visible file a.txt to .env and creates .env.local.
# Expected: from bound + 1 s after the host's change on, opening the file
# inside under its old name (a.txt) or the new one (.env) is refused, and
# .env.local is never readable (hidden names are never cached). Control:
# a.txt is readable inside before the rename. Run twice: with the host watch
# (long cache timeouts, fusefs/host-watch.c) and without (VR_VIEW_NO_WATCH=1,
# the 1 s timeouts).
. "$(dirname "$0")/../lib/libtest.sh"
. "$(dirname "$0")/../lib/sandbox-lib.sh"
vr_require_sandbox
for nowatch in 0 1; do
	mode=watch; [ "$nowatch" = 1 ] && mode=nowatch
	P="$T/project"
	rm -rf "$P"; mkdir -p "$P"
	echo SECRET-A >"$P/a.txt"
	bound=1 # the default --entry-timeout/--attr-timeout, seconds

	VR_VIEW_NO_WATCH=$nowatch "$VR" --project "$P" --profile none -- sh -c '
		cd "$1" || exit 1
		cat a.txt >/dev/null && echo "before a.txt ok"
		cat a.txt >/dev/null && echo up >ready
		while [ ! -e go ]; do sleep 0.05; done
		end=$(( $(date +%s) + 5 ))
		while [ "$(date +%s)" -lt "$end" ]; do
			for n in a.txt .env .env.local; do
				t=$(date +%s.%N)
				if grep -q SECRET "$n" 2>/dev/null; then echo "$t $n ok"; else echo "$t $n refused"; fi
			done
			sleep 0.05
		done' sh "$P" >"$T/log" 2>&1 &
	sup=$!
	for i in $(seq 1 400); do [ -e "$P/ready" ] && break; sleep 0.05; done
	vr_check "$mode: the sandbox started" test -e "$P/ready"
	t_change=$(date +%s.%N)
	mv "$P/a.txt" "$P/.env"
	echo SECRET-B >"$P/.env.local"
	touch "$P/go"
	st=0
	wait "$sup" || st=$?
	vr_check "$mode: the sandbox run ended well (exit $st)" test "$st" = 0
	vr_check "$mode: control: a.txt was readable inside before the rename" grep -q '^before a.txt ok' "$T/log"
	deadline=$(awk -v t="$t_change" -v b="$bound" 'BEGIN { printf "%.3f", t + b + 1 }')
	late=$(awk -v d="$deadline" '$1 ~ /^[0-9.]+$/ && $1 + 0 > d + 0' "$T/log")
	vr_check "$mode: the run kept probing after the bound + 1 s" test "$(grep -c . <<<"$late")" -gt 6
	vr_check_not "$mode: after the bound + 1 s, a.txt (now .env on the host) is refused under its old name" grep -q ' a.txt ok' <<<"$late"
	vr_check_not "$mode: after the bound + 1 s, .env (renamed on the host) is refused" grep -q ' \.env ok' <<<"$late"
	vr_check_not "$mode: .env.local created on the host is never readable" grep -q ' \.env\.local ok' "$T/log"
	vr_check_not "$mode: the renamed .env is never readable under its new name" grep -q ' \.env ok' "$T/log"
	stale=$(grep -c '^[0-9.]* a.txt ok' "$T/log" || true)
	echo "$mode: a.txt still read under its old name $stale time(s) within the bound"
	[ "$vr_failures" = 0 ] || { echo "host change at $t_change"; cat "$T/log"; }
	vr_check "$mode: the host files are intact" sh -c "grep -q SECRET-A '$P/.env' && grep -q SECRET-B '$P/.env.local'"
done
vr_done
