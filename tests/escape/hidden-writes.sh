#!/usr/bin/env bash
# Invariant 3: nothing hidden can be created, overwritten or replaced through
# the view. From inside the sandbox, writes to the hidden names .env (exists
# on the host) and new.pem (does not) by every call: open O_CREAT|O_TRUNC,
# O_CREAT|O_EXCL, mknod, mkdir, symlink, link, rename, RENAME_EXCHANGE,
# RENAME_NOREPLACE. Expected: every call fails, the host .env is
# byte-identical (sha256), no new.pem appears on the host, and each refusal
# is in the audit log. Control: the same calls work on a plain directory.
. "$(dirname "$0")/../lib/libtest.sh"
. "$(dirname "$0")/../lib/view-lib.sh"
. "$(dirname "$0")/../lib/sandbox-lib.sh"
vr_require_sandbox
A="$VR_BIN/attack-hidden"
[ -x "$A" ] || vr_fail "attack-hidden helper is not built"
mkdir -p "$T/bin"
cp "$A" "$T/bin/"
P="$T/project"
view_make_demo "$P"
ops="creat-trunc excl mknod mkdir symlink link rename exchange noreplace"

# Control: on a plain copy each call does write the name (RENAME_EXCHANGE
# needs an existing target, so it swaps with .env there).
cp -a "$P" "$T/plain"
for op in $ops; do
	name=new.pem
	[ "$op" = exchange ] && name=.env
	got=$(cd "$T/plain" && "$A" write "$op" "$name")
	vr_check "control: $op of $name works on a plain directory ($got)" test "$got" = "$op ok"
	rm -rf "$T/plain/new.pem"
done

sum=$(sha256sum <"$P/.env")
ls -la "$P" >"$T/before.ls"
out=$("$VR" --project "$P" --audit "$T/audit.jsonl" --ro-bind "$T/bin" /vr-bin -- sh -c '
	cd "$1" || exit 1
	for name in .env new.pem; do
		for op in '"$ops"'; do
			/vr-bin/attack-hidden write "$op" "$name" | sed "s/^/$name /"
		done
	done' sh "$P") || vr_fail "the sandbox run failed"
echo "$out"
for name in .env new.pem; do
	for op in $ops; do
		r=$(awk -v n="$name" -v o="$op" '$1 == n && $2 == o { print $3 }' <<<"$out")
		vr_check "$op of $name is refused inside (${r:-no answer})" test -n "$r" -a "$r" != ok
	done
done
vr_check "the host .env is byte-identical" test "$(sha256sum <"$P/.env")" = "$sum"
vr_check "no new.pem was made on the host" test ! -e "$P/new.pem" -a ! -L "$P/new.pem"
vr_check "no scratch file is left" test ! -e "$P/vr-attack-scratch"
vr_check "the project listing is unchanged" diff <(ls -la "$P" | grep -v ' \.$') <(grep -v ' \.$' "$T/before.ls")

# Each kind of call left a refusal on a hidden name in the audit log.
for aop in create mknod mkdir symlink link rename; do
	vr_check "the audit log has a refused $aop of a hidden name" \
		grep -qE '"op":"'"$aop"'".*"(path|target)":"(\.env|new\.pem)".*"result":"(hidden|EACCES|EPERM)"|"op":"'"$aop"'".*"result":"(hidden|EACCES|EPERM)".*"(path|target)":"(\.env|new\.pem)"' "$T/audit.jsonl"
done
[ "$vr_failures" = 0 ] || grep -v '"result":"ok"' "$T/audit.jsonl" | head -30
vr_done
