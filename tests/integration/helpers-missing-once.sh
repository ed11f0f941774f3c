#!/usr/bin/env bash
# vault-run execs helpers of its own (common/proc.h): vault-run-proxy for
# --net allow= and vault-run-systemd for limits under systemd. They are
# found beside the running executable, else in the install's libexec. A
# copy of vault-run without them still runs what needs neither; a run that
# needs the proxy is refused before anything starts, in one line that says
# where it looked, with 125, and leaves no mount behind. Control: the build
# tree's vault-run, beside its helpers, runs the same command. doctor says
# which proxy it would run, or that none is there.
. "$(dirname "$0")/../lib/libtest.sh"
. "$(dirname "$0")/../lib/sandbox-lib.sh"
vr_require_sandbox
mkdir -p "$T/p" "$T/bin"
cp "$VR" "$T/bin/vault-run"

vr_check "control: the build's vault-run starts the proxy" \
	"$VR" --project "$T/p" --profile none --net allow=example.org -- sh -c 'test -n "$HTTP_PROXY"'
vr_check "a lone copy runs with --net none (no helper needed)" \
	"$T/bin/vault-run" --project "$T/p" --profile none --net none -- touch ran
vr_check "… and COMMAND ran" test -e "$T/p/ran"
rm -f "$T/p/ran"
st=0
"$T/bin/vault-run" --project "$T/p" --profile none --net allow=example.org -- touch ran 2>"$T/err" || st=$?
vr_check "with --net allow= it is refused with 125 (exit $st)" test "$st" = 125
vr_check "… in one line" test "$(wc -l <"$T/err")" = 1
vr_check "… that names the proxy and where it looked" grep -q "vault-run-proxy is neither at $T/bin/vault-run-proxy" "$T/err"
vr_check_not "… before COMMAND ran" test -e "$T/p/ran"
vr_check_not "… and no mount is left under the test dir" grep -q " $T" /proc/self/mountinfo
cat "$T/err"
vr_check "doctor names the build's proxy" bash -c "'$VR' doctor | grep -q 'ok .*network proxy.*$VR_BUILD_DIR/vault-run-proxy'"
vr_check "… and warns that the lone copy has none, with the fix" \
	bash -c "'$T/bin/vault-run' doctor | grep -q 'warn .*network proxy.*missing.*cmake --install'"
vr_done
