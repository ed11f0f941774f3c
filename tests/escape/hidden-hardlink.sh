#!/usr/bin/env bash
# Invariant 1, hard links: a hard link to .env made on the host before the
# run, under a visible name (hl). Expected (invariant 1): hl is refused inside, whichever name the
# agent reaches first: a regular file with several names takes the strictest
# class of all its names in the project (fusefs/hardlinks.c walks the project
# once, on the first lookup of a multi-link file).
. "$(dirname "$0")/../lib/libtest.sh"
. "$(dirname "$0")/../lib/view-lib.sh"
. "$(dirname "$0")/../lib/sandbox-lib.sh"
vr_require_sandbox
P="$T/project"
view_make_demo "$P"
ln "$P/.env" "$P/hl"
run() { "$VR" --profile none --project "$P" -- sh -c "cd '$P' && $1" 2>&1 || true; }

vr_check "control: the hard link reads the secret on the host" grep -q hunter2 "$P/hl"
vr_check_not "after .env was looked up, hl is refused inside (the documented strictest class)" \
	grep -q hunter2 <(run 'cat .env; cat hl')
vr_check_not "hl reached first is refused inside" grep -q hunter2 <(run 'cat hl')
vr_check "the host .env is intact" grep -q hunter2 "$P/.env"
vr_done
