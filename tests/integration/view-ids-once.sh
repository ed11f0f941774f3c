#!/usr/bin/env bash
# Who owns what through the view (fusefs/ids.c, docs/view.md "Owners"):
#  1. `vault-run mount --allow-other` as root: what another uid creates is
#     that uid's (it can chmod, truncate, link and chown its own new file),
#     and a set-group-ID directory still gives its group;
#  2. an unprivileged user in a shared group: files of `user:staff` (and of
#     another owner in `staff`) are writable through `vault-run`, where the
#     view is mounted in a user namespace that maps only the user's own ids
#     (the kernel refuses writes to inodes with unmapped ids); a group the
#     user is not in stays refused by the host;
#  3. `vault-run` as root: what the agent (65534) creates is root's on the
#     host, presented as the agent's.
# Root only: it makes up uids and groups (setpriv), which no other variant
# can; the fix it checks is for the unprivileged user of case 2.
. "$(dirname "$0")/../lib/libtest.sh"
. "$(dirname "$0")/../lib/view-lib.sh"
. "$(dirname "$0")/../lib/sandbox-lib.sh"
vr_is_host_root || vr_skip "needs root of the initial user namespace (it makes up uids and groups)"
vr_require_fuse
vr_require_cmd setpriv python3
chmod 755 "$T"
U=4241 STAFF=4242 OTHER=4243
owner() { stat -c %u:%g "$1"; }

# --- 1. vault-run mount --allow-other, daemon as root ------------------------------
P="$T/p1" M="$T/m1"
mkdir -p "$P/shared"
chmod 777 "$P"
chown 0:$STAFF "$P/shared"
chmod 2777 "$P/shared"
vr_mount "$P" "$M" --allow-other || vr_skip "cannot mount a FUSE view here"
as_nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all "$@"; }
as_nobody sh -c 'cd "$1" && echo x >f && mkdir d && ln -s f l && python3 -c "import os; os.mknod(\"n\", 0o100644)" &&
	echo y >shared/f' sh "$M"
for f in f d l n; do
	vr_check "a file another uid creates is its own on the host: $f ($(owner "$P/$f"))" \
		test "$(stat -c %u:%g "$P/$f")" = 65534:65534
done
vr_check "…also in a set-group-ID directory, whose group it keeps ($(owner "$P/shared/f"))" \
	test "$(owner "$P/shared/f")" = 65534:$STAFF
vr_check "the creator can chmod its new file" as_nobody chmod 600 "$M/f"
vr_check "…truncate it" as_nobody truncate -s 0 "$M/f"
vr_check "…link it (protected_hardlinks)" as_nobody ln "$M/f" "$M/f2"
vr_check "…chown it to itself" as_nobody chown 65534:65534 "$M/f"
vr_check "…and the host agrees" test "$(stat -c %a:%s:%h "$P/f")" = 600:0:2
touch "$M/byroot"
vr_check "what root creates stays root's" test "$(owner "$P/byroot")" = 0:0
vr_unmount

# --- 2. an unprivileged user in a shared group, through vault-run -------------------
P="$T/p2"
mkdir -p "$P/sub" "$T/home" "$T/ustate"
printf 'own\n' >"$P/own.txt"
printf 'team\n' >"$P/team.txt"
printf 'other\n' >"$P/other.txt"
chown $U:$STAFF "$P" "$P/sub" "$P/own.txt"
chown 0:$STAFF "$P/team.txt"
chown 0:$OTHER "$P/other.txt"
chmod 2775 "$P"
chmod 2755 "$P/sub"
chmod 664 "$P/own.txt" "$P/team.txt" "$P/other.txt"
chown $U:$U "$T/home" "$T/ustate"
cat >"$T/inside.sh" <<'EOF'
r() { "$@" 2>/dev/null; echo $?; }
echo "own=$(r sh -c 'echo more >>own.txt')"
echo "team=$(r sh -c 'echo more >>team.txt')"
echo "other=$(r sh -c 'echo more >>other.txt')"
echo "new=$(r sh -c 'echo new >new.txt')"
echo "mkdir=$(r mkdir sub/newdir)"
echo "ids=$(stat -c %u:%g own.txt)"
echo "chgrp=$(r chgrp "$(id -g)" own.txt)"
echo "chmod=$(r chmod g+w sub)"
EOF
chmod 644 "$T/inside.sh"
# The user's own /dev/fuse node (0666) in a private mount namespace, as
# tests/lib/run-test.sh does for the @user variant.
unshare -m --propagation private bash -c '
	set -e
	node=$(mktemp -d /tmp/vr-fuse-node.XXXXXX)
	mknod -m 0666 "$node/fuse" c 10 229
	mount --bind "$node/fuse" /dev/fuse
	rm -rf "$node"
	cd "$2"
	exec setpriv --reuid='$U' --regid='$U' --groups='$STAFF' --inh-caps=-all \
		env HOME="$3" XDG_STATE_HOME="$4" "$1" --project "$2" -- sh -c "$5"' \
	sh "$VR" "$P" "$T/home" "$T/ustate" "$(cat "$T/inside.sh")" >"$T/inside.out" 2>"$T/inside.err" || true
if ! grep -q '^own=' "$T/inside.out"; then
	cat "$T/inside.err"
	setpriv --reuid=$U --regid=$U --groups=$STAFF unshare -U true 2>/dev/null ||
		vr_skip "uid $U cannot create user namespaces here"
	vr_fail "the sandbox did not run as uid $U"
fi
got() { sed -n "s/^$1=//p" "$T/inside.out"; }
vr_check "the user writes its own file of group staff (was EACCES)" test "$(got own)" = 0
vr_check "…and a file of another owner, group-writable for staff" test "$(got team)" = 0
vr_check_not "…but not one of a group it is not in (the host refuses)" test "$(got other)" = 0
vr_check "it creates files in the shared set-group-ID directory" test "$(got new)" = 0
vr_check "…and directories" test "$(got mkdir)" = 0
vr_check "ids without a mapping are presented as the user's own ($(got ids))" test "$(got ids)" = $U:$U
vr_check "a chgrp to the presented group succeeds" test "$(got chgrp)" = 0
vr_check "the host has the writes" test "$(cat "$P/own.txt" "$P/team.txt")" = "$(printf 'own\nmore\nteam\nmore')"
vr_check "the host refused the other group's file" test "$(cat "$P/other.txt")" = other
vr_check "…the new file got the directory's group ($(owner "$P/new.txt"))" test "$(owner "$P/new.txt")" = $U:$STAFF
vr_check "…the new directory too, set-group-ID ($(stat -c %a "$P/sub/newdir"))" \
	test "$(owner "$P/sub/newdir")" = $U:$STAFF -a -g "$P/sub/newdir"
vr_check "the chgrp to the presented group left the host's staff" test "$(owner "$P/own.txt")" = $U:$STAFF
vr_check "a chmod of the shared directory keeps its set-group-ID bit ($(stat -c %a "$P/sub"))" \
	test "$(got chmod)" = 0 -a "$(stat -c %a "$P/sub")" = 2775

# --- 3. vault-run as root: the agent's files are root's ------------------------------
P="$T/p3"
mkdir -p "$P"
"$VR" --project "$P" -- sh -c 'echo x >made && stat -c %u:%g made && chmod 600 made && chown 65534 made' \
	>"$T/root.out" 2>"$T/root.err" || { cat "$T/root.err"; vr_fail "the root run failed"; }
vr_check "inside, the agent owns what it made ($(head -1 "$T/root.out"))" test "$(head -1 "$T/root.out")" = 65534:65534
vr_check "on the host it is root's (the user who ran vault-run)" test "$(owner "$P/made")" = 0:0
vr_check "…with the agent's chmod" test "$(stat -c %a "$P/made")" = 600
view_done
