#!/usr/bin/env bash
# Secrets by content in the view (issue 8, docs/scanning.md "In the view"):
# a file the policy shows but that holds a key is served masked (same length,
# same offsets), read-only; --scan refuse refuses it; .git/config and
# pip.conf credentials in URLs are masked, a compose file's development
# defaults are not (and stay writable); the audit log names rule and range, never the secret; a host
# edit that removes the secret is served plain once the caches time out.
. "$(dirname "$0")/../lib/libtest.sh"
. "$(dirname "$0")/../lib/view-lib.sh"
vr_require_fuse
vr_require_cmd python3
vr_require_cmd git

P="$T/project" M="$T/view"
mkdir -p "$P/config" "$P/src"
# Built from pieces so this test file itself holds no secret shape.
AWS="AKIA""QWERTYUIOPASDF12"
GH="ghp_""aB3dE5fG7hJ9kL1mN3pQ5rS7tV9wX1yZ3b5D"
GITTOK="glpat-""Zx8Cv7Bn6Mq5Wr4Et3Yu"
cat >"$P/config/settings.py" <<EOF
# settings
DEBUG = False
AWS_ACCESS_KEY_ID = "$AWS"
GITHUB = "$GH"
NAME = "demo"
EOF
printf 'def f():\n    return 42\n' >"$P/src/clean.py"
git -C "$P" init -q
git -C "$P" remote add origin "https://user:$GITTOK@git.example.com/x.git"
# Credentials in URLs: a plain password of a real host is a secret (a git
# remote, pip's index-url); localhost, a password equal to the user, the
# defaults of a compose file and the documentation domains are not (and
# must stay writable: masking makes a file read-only).
PW="secret""sauce" PIPPW="my""password"
git -C "$P" remote add backup "https://bot:$PW@git.acme-corp.io/x.git"
printf '[global]\nindex-url = https://ci:%s@nexus.acme.io/repository/pypi/simple\n' "$PIPPW" >"$P/pip.conf"
cat >"$P/docker-compose.yml" <<'YML'
services:
  app:
    environment:
      DATABASE_URL: postgres://postgres:postgres@db:5432/app
      CACHE_URL: redis://:changeme@redis:6379/0
      LOCAL_URL: postgres://app:Zx9pLm2q@localhost:5432/app
      DOCS_URL: https://user:Hx7kLm2Q@api.example.com/v1
YML
cp "$P/config/settings.py" "$T/settings.orig"
cp "$P/.git/config" "$T/gitconfig.orig"

# sanity: the scanner itself finds all three (else the view checks prove nothing)
"$VR" scan "$P/config/settings.py" "$P/.git/config" >"$T/scan.out" 2>&1 || true
vr_check "vault-run scan finds the three planted secrets" \
	test "$(grep -c -E 'aws-access-key-id|github-token|url-credentials|gitlab-token' "$T/scan.out")" -ge 3

# expected view content: each secret replaced by '*' of its length
masked() { python3 - "$1" "$AWS" "$GH" "$GITTOK" <<'PY'
import sys
data = open(sys.argv[1], 'rb').read()
for s in sys.argv[2:]:
    data = data.replace(s.encode(), b'*' * len(s))
sys.stdout.buffer.write(data)
PY
}
masked "$P/config/settings.py" >"$T/settings.want"

vr_mount "$P" "$M" --audit "$T/scan.jsonl" --attr-timeout 0.2 --entry-timeout 0.2 \
	|| vr_skip "cannot mount a FUSE view here"

cat "$M/config/settings.py" >"$T/settings.view" || vr_fail "read settings.py through the view"
vr_check "settings.py: secrets masked with '*' of the same length at the same offsets" \
	cmp "$T/settings.want" "$T/settings.view"
vr_check_not "settings.py: the AWS key does not appear" grep -qF "$AWS" "$T/settings.view"
vr_check "settings.py: size unchanged" \
	test "$(stat -c %s "$M/config/settings.py")" = "$(stat -c %s "$P/config/settings.py")"
vr_check "settings.py: the rest reads normally" grep -q 'NAME = "demo"' "$T/settings.view"
vr_check "settings.py: a second read (cached verdict) is masked too" \
	sh -c "cat '$M/config/settings.py' | cmp - '$T/settings.want'"
vr_check_not "settings.py: append open refused" sh -c "echo x >>'$M/config/settings.py'"
vr_check_not "settings.py: O_TRUNC open refused" sh -c ": >'$M/config/settings.py'"
vr_check_not "settings.py: truncate(2) (setattr size, no open) refused" \
	python3 -c 'import os, sys; os.truncate(sys.argv[1], 0)' "$M/config/settings.py"
printf 'masked text\n' >"$M/config/new.py"
vr_check_not "settings.py: an editor's save (rename a temp file over it) refused" \
	mv "$M/config/new.py" "$M/config/settings.py"
vr_check_not "settings.py: moving it away refused" mv "$M/config/settings.py" "$M/config/moved.py"
vr_check_not "settings.py: unlink refused" rm -f "$M/config/settings.py"
vr_check "settings.py: the host file is unchanged" cmp "$T/settings.orig" "$P/config/settings.py"

vr_check "clean.py: served as is" cmp "$P/src/clean.py" "$M/src/clean.py"
vr_check "clean.py: writable" sh -c "echo '# more' >>'$M/src/clean.py'"
vr_check "clean.py: the write reached the host" grep -q '# more' "$P/src/clean.py"

cat "$M/.git/config" >"$T/gitconfig.view" || vr_fail "read .git/config through the view"
vr_check ".git/config: the token in the remote URL is masked" \
	sh -c "! grep -qF '$GITTOK' '$T/gitconfig.view' && grep -q 'https://user:\*\*\*\**@git.example.com' '$T/gitconfig.view'"
vr_check ".git/config: size unchanged" \
	test "$(stat -c %s "$M/.git/config")" = "$(stat -c %s "$P/.git/config")"
vr_check ".git/config: a plain password in another remote is masked, same length" \
	sh -c "! grep -qF '$PW' '$T/gitconfig.view' && grep -q 'https://bot:\*\{${#PW}\}@git.acme-corp.io' '$T/gitconfig.view'"
vr_check "pip.conf: the index-url password is masked" \
	sh -c "! grep -qF '$PIPPW' '$M/pip.conf' && grep -q 'https://ci:\*\{${#PIPPW}\}@nexus.acme.io' '$M/pip.conf'"
vr_check_not "pip.conf: read-only" sh -c "echo '# x' >>'$M/pip.conf'"
vr_check "docker-compose.yml: defaults, localhost, example.com served as is" \
	cmp "$P/docker-compose.yml" "$M/docker-compose.yml"
vr_check "docker-compose.yml: and writable" sh -c "echo '# more' >>'$M/docker-compose.yml'"
vr_check "docker-compose.yml: the write reached the host" grep -q '# more' "$P/docker-compose.yml"

# The host removes the secret: a new version (mtime, ctime) is scanned again
# and, without hits, served plain once the attribute cache (0.2 s) expires.
python3 - "$P/config/settings.py" "$AWS" "$GH" <<'PY'
import sys
p = sys.argv[1]
d = open(p).read()
for s in sys.argv[2:]:
    d = d.replace(s, "from-env")
open(p, "w").write(d)
PY
plain=no
for i in $(seq 1 100); do
	if cat "$M/config/settings.py" 2>/dev/null | cmp -s - "$P/config/settings.py"; then plain=yes; break; fi
	sleep 0.1
done
vr_check "after a host edit without the secret the view serves the file plain" test "$plain" = yes
vr_check "and it is writable again" sh -c "echo '# ok' >>'$M/config/settings.py'"
vr_unmount

L="$T/scan.jsonl"
vr_check "audit: a scan event with the AWS rule and its byte range" python3 - "$L" "$T/settings.orig" "$AWS" <<'PY'
import json, sys
log, orig, aws = sys.argv[1], open(sys.argv[2], 'rb').read(), sys.argv[3].encode()
ev = [json.loads(l) for l in open(log)]
hits = [e for e in ev if e["op"] == "scan" and e.get("rule") == "aws-access-key-id"]
assert len(hits) == 1, hits
h = hits[0]
assert h["path"] == "config/settings.py" and h["result"] == "redacted" and h["rule_kind"] == "scan", h
assert orig[h["offset"]:h["offset"] + h["length"]] == aws, h
assert any(e["op"] == "scan" and e["path"] == ".git/config" for e in ev)
# refused at open, or in no-open mode at the first write
assert any(e["op"] in ("open", "write") and e["path"] == "config/settings.py" and e["result"] == "EACCES" for e in ev)
PY
vr_check_not "audit: no secret bytes in the log" grep -qF -e "$AWS" -e "$GH" -e "$GITTOK" -e "$PW" -e "$PIPPW" "$L"
vr_check "audit: the log verifies as sealed" "$VR" audit verify "$L"

# --- scan = refuse ---
cp "$T/settings.orig" "$P/config/settings.py"
vr_mount "$P" "$M" --scan refuse --audit "$T/refuse.jsonl" || vr_fail "mount with --scan refuse"
err=$(cat "$M/config/settings.py" 2>&1 >/dev/null) && vr_fail "--scan refuse: the read succeeded"
vr_check "--scan refuse: EACCES" sh -c "echo '$err' | grep -q 'Permission denied'"
vr_check "--scan refuse: a clean file still reads" cmp "$P/src/clean.py" "$M/src/clean.py"
vr_unmount

# --- scan = off (from the user's config file via --policy): served as is ---
printf '[view]\nscan = off\n' >"$T/off.conf"
vr_mount "$P" "$M" --policy "$T/off.conf" || vr_fail "mount with [view] scan = off"
vr_check "[view] scan = off: served unmasked" cmp "$P/config/settings.py" "$M/config/settings.py"
vr_unmount

# --- a project file may not turn the scan off ---
printf '[view]\nscan = off\n' >"$P/.vault-run"
rc=0; "$VR" mount "$P" "$M" 2>"$T/proj.err" || rc=$?
vr_check "[view] in a project .vault-run is refused (125)" test "$rc" = 125
vr_check "with a message naming it" grep -q 'not allowed in a project config' "$T/proj.err"
rm -f "$P/.vault-run"
rc=0; "$VR" mount --scan loud "$P" "$M" 2>/dev/null || rc=$?
vr_check "a bad --scan value exits 125" test "$rc" = 125
view_done
