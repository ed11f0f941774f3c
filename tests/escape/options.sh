#!/usr/bin/env bash
# Option injection: after `--` (and after COMMAND) nothing is parsed as a
# vault-run option: `vault-run -- --bind / /x` runs a command named --bind
# (127, not found) and binds nothing; COMMAND's arguments arrive verbatim.
# A project path with spaces, a newline or a leading `-` works, and its
# .env stays hidden. Control: before `--`, --bind is an option.
. "$(dirname "$0")/../lib/libtest.sh"
. "$(dirname "$0")/../lib/sandbox-lib.sh"
vr_require_sandbox
P="$T/project"
mkdir -p "$P" "$T/outside"
echo OUTSIDE >"$T/outside/marker"

vr_expect_status 0 "control: before --, --bind is an option (the bound file is there)" \
	"$VR" --project "$P" --profile none --bind "$T/outside" /x -- cat /x/marker
vr_expect_status 127 "-- --bind / /x runs a command named --bind" \
	"$VR" --project "$P" --profile none -- --bind "$T/outside" /x
vr_expect_status 127 "-- --policy FILE runs a command named --policy" \
	"$VR" --project "$P" --profile none -- --policy "$T/outside/marker"
vr_expect_status 127 "-- --help runs a command named --help" \
	"$VR" --project "$P" --profile none -- --help
vr_check_not "a sandbox whose COMMAND is --bind saw no bind (nothing at /x)" \
	"$VR" --project "$P" --profile none -- sh -c 'test -e /x/marker' sh --bind "$T/outside" /x

args=(--bind / /x --policy /etc/passwd --project / --net host --help -v -- --version)
want=$(printf '%s\n' "${args[@]}")
got=$("$VR" --project "$P" --profile none -- sh -c 'printf "%s\n" "$@"' sh "${args[@]}")
vr_check "COMMAND's arguments after -- arrive verbatim" test "$got" = "$want"
got=$("$VR" --project "$P" --profile none sh -c 'printf "%s\n" "$@"' sh "${args[@]}")
vr_check "arguments after COMMAND (no --) arrive verbatim" test "$got" = "$want"

# Awkward project paths.
check_project() {
	local dir=$1 what=$2 out
	mkdir -p "$dir"
	echo visible >"$dir/file"
	echo 'TOKEN=hunter2' >"$dir/.env"
	out=$(cd "$T" && "$VR" --project "$dir" --profile none -- sh -c 'cat file; cat .env 2>/dev/null; pwd' 2>&1) || true
	vr_check "project $what: a file is readable inside" grep -qx visible <<<"$out"
	vr_check_not "project $what: .env is hidden inside" grep -q hunter2 <<<"$out"
}
check_project "$T/with space" "with spaces"
check_project "$T/new
line" "with a newline"
check_project "$T/-dash" "with a leading - (absolute)"
mkdir -p "$T/-rel"
echo visible >"$T/-rel/file"
echo 'TOKEN=hunter2' >"$T/-rel/.env"
out=$(cd "$T" && "$VR" --project -rel --profile none -- sh -c 'cat file; cat .env 2>/dev/null' 2>&1) || true
echo "$out"
vr_check "project -rel (relative, leading -): a file is readable inside" grep -qx visible <<<"$out"
vr_check_not "project -rel: .env is hidden inside" grep -q hunter2 <<<"$out"
vr_done
