#!/usr/bin/env bash
# Invariant 1, hard links: a hard link to .env made on the host before the
# run, under a visible name (hl). docs/view.md (Limits) says a file with
# several names gets the strictest class once the daemon has seen both
# names. Expected (invariant 1): hl is refused inside — at least once .env
# has been looked up, and ideally always.
#
# KNOWN WEAKNESS (found by this test, not fixed yet): a hidden name is
# refused at lookup before its inode is interned (fusefs/lookup.c), so the
# strictest-class rule of vr_inode_intern() never sees the hidden class and
# hl serves the secret in both orders. A fix needs the daemon to know the
# (dev, ino) of hidden files with st_nlink > 1 before the agent reaches a
# visible link (e.g. record them at each hidden lookup, and refuse or scan
# for a visible regular file with st_nlink > 1). This test fails until then.
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
