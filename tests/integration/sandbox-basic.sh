#!/usr/bin/env bash
# Everyday use of `vault-run -- COMMAND`: the project without its secrets,
# exit codes, stdio, real tools (git, cc + make, python3), the environment.
. "$(dirname "$0")/../lib/libtest.sh"
. "$(dirname "$0")/../lib/view-lib.sh"
. "$(dirname "$0")/../lib/sandbox-lib.sh"
vr_require_cmd git cc make
vr_require_sandbox

P="$T/project"
view_make_demo "$P"
cd "$P"
run() { "$VR" --project "$P" "$@"; }

out=$(run -- sh -c 'ls -la' 2>&1)
vr_check "ls -la lists the project" grep -q README.md <<<"$out"
vr_check_not "ls -la shows no .env" grep -qE ' \.env$' <<<"$out"
vr_check "the host still has .env (so hiding is the view's doing)" test -f "$P/.env"
err=$(run -- cat .env 2>&1) && vr_fail "cat .env succeeded" || true
vr_check "cat .env: No such file or directory" grep -q "No such file or directory" <<<"$err"
vr_check "the cwd inside is the project path" test "$(run -- pwd)" = "$P"
mkdir -p "$P/src/deeper"
vr_check "a subdirectory cwd maps inside" test "$(cd "$P/src/deeper" && run -- pwd)" = "$P/src/deeper"
vr_check "--mount-at moves the project" test "$(run --mount-at /work -- sh -c 'pwd; test -f Makefile && echo ok')" = "$(printf '/work\nok')"

vr_expect_status 0 "true" run -- true
vr_expect_status 3 "exit 3 passes through" run -- sh -c 'exit 3'
vr_expect_status 143 "death by SIGTERM is 128+15" run -- sh -c 'kill -TERM $$'
vr_expect_status 137 "death by SIGKILL is 128+9" run -- sh -c 'kill -KILL $$'
vr_expect_status 127 "a missing command is 127" run -- no-such-command-vr
printf 'echo hi\n' >"$P/notexec.sh"
chmod 644 "$P/notexec.sh"
vr_expect_status 126 "a non-executable command is 126" run -- ./notexec.sh
vr_expect_status 127 "a COMMAND starting with - after -- is run, not parsed" run -- --not-an-option
vr_expect_status 125 "unknown option" run --no-such-option true
vr_expect_status 125 "option without its argument" run --ro-bind /usr
vr_expect_status 125 "missing project" "$VR" --project "$T/missing" -- true
printf x >"$T/afile"
vr_expect_status 125 "project not a directory" "$VR" --project "$T/afile" -- true
vr_expect_status 125 "missing bind source" run --ro-bind "$T/missing" /x -- true
vr_expect_status 0 "--ro-bind-try with a missing source is fine" run --ro-bind-try "$T/missing" /x -- true
msg=$(run --frobnicate true 2>&1 || true)
vr_check "errors are one line" test "$(wc -l <<<"$msg")" = 1

vr_check "stdin and stdout pass through" test "$(printf 'abc\n' | run -- cat)" = abc
# --hide .git: the demo repository commits its fake secrets, and the history
# warning is shown even with --quiet.
vr_check "stderr passes through" test "$(run --quiet --hide .git -- sh -c 'echo err >&2' 2>&1 >/dev/null)" = err

vr_check "git status works in the view" run -- git status --short
vr_check "cc + make build in the project" run -- make -s demo
vr_check "the build output is on the host" test -x "$P/demo"
vr_check "the built program runs inside" test -n "$(run -- ./demo 2>&1 || true)"
if [ -x /usr/bin/python3 ]; then
	vr_check "python3 runs" test "$(run -- /usr/bin/python3 -c 'print(6*7)')" = 42
fi

export VR_TEST_HOST_SECRET=s3cret LANG=C.UTF-8
vr_check "a host variable not allowed is absent" test "$(run -- sh -c 'echo ${VR_TEST_HOST_SECRET:-unset}')" = unset
vr_check "the default allow-list passes LANG" test "$(run -- sh -c 'echo $LANG')" = C.UTF-8
vr_check "--env-allow GLOB passes it" test "$(run --env-allow 'VR_TEST_*' -- sh -c 'echo $VR_TEST_HOST_SECRET')" = s3cret
vr_check "--setenv" test "$(run --setenv A 1 -- sh -c 'echo $A')" = 1
vr_check "--unsetenv" test "$(run --unsetenv LANG -- sh -c 'echo ${LANG:-unset}')" = unset
printf 'API_KEY="k 1"\nOTHER=o\n' >"$T/keys.env"
vr_check "--env-file FILE:VAR injects that variable" \
	test "$(run --env-file "$T/keys.env:API_KEY" -- sh -c 'echo "$API_KEY/${OTHER:-unset}"')" = "k 1/unset"
vr_check "--env-file FILE injects all" test "$(run --env-file "$T/keys.env" -- sh -c 'echo $OTHER')" = o
# --rootfs: another root file system's /etc instead of the host's.
mkdir -p "$T/rootfs/etc"
echo other-distro >"$T/rootfs/etc/issue"
for l in bin lib lib64; do ln -s "usr/$l" "$T/rootfs/$l"; done
vr_check "--rootfs replaces /etc" test "$(run --rootfs "$T/rootfs" --ro-bind /usr /usr -- sh -c 'cat /etc/issue; ls /etc | wc -l')" = "$(printf 'other-distro\n1')"
vr_check "--dry-run prints the plan" grep -q '^bind' <(run --dry-run -- true)
vr_check "--help fits a screen" test "$("$VR" --help | wc -l)" -le 25
vr_done
