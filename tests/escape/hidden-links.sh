#!/usr/bin/env bash
# Invariant 1 and 9, issue 16 route 4: hidden and read-only directories
# reached through symlinks the host made. Dotfile managers (stow) make
# `.aws -> dotfiles/aws`; the kernel follows such a link itself, so before
# the fix the view only ever saw dotfiles/aws/credentials and served it.
# Links at the root (relative, absolute) for .aws, .ssh, .gnupg, .kube,
# .docker and .config (vault-run's config below it), a file link (.envrc),
# a read-only directory (.vscode -> editor), a name rules look into
# (.claude -> cfg: cfg/commands/ is .claude/commands/), a link deeper in the
# tree met by a lookup, and a link the host makes during the run after the
# agent has read the target once. Expected: the secrets are unreadable
# under the link's name and under the target's own, the read-only targets
# unwritable (host bytes unchanged), each refusal audited; what no rule
# covers (cfg/notes.md) stays writable. Control: on the host the target
# paths hold the secrets and the files are writable.
. "$(dirname "$0")/../lib/libtest.sh"
. "$(dirname "$0")/../lib/sandbox-lib.sh"
vr_require_sandbox
P="$T/project"
mkdir -p "$P"/dotfiles/{aws,ssh,gnupg,kube,docker,config/vault-run} "$P"/{editor,cfg/commands,scripts,sub,subkeys,late}
echo "AWS-SECRET" >"$P/dotfiles/aws/credentials"
echo "SSH-SECRET" >"$P/dotfiles/ssh/id_test"
echo "GPG-SECRET" >"$P/dotfiles/gnupg/secring"
echo "KUBE-SECRET" >"$P/dotfiles/kube/config"
echo "DOCKER-SECRET" >"$P/dotfiles/docker/config.json"
echo "VR-CONFIG-SECRET" >"$P/dotfiles/config/vault-run/config"
echo "SUB-SECRET" >"$P/subkeys/id_sub"
echo "LATE-SECRET" >"$P/late/secring"
echo '{"tasks":[]}' >"$P/editor/tasks.json"
echo "cmd" >"$P/cfg/commands/x.md"
echo "echo hi" >"$P/scripts/envrc"
(cd "$P" && ln -s dotfiles/aws .aws && ln -s "$P/dotfiles/ssh" .ssh && ln -s dotfiles/gnupg .gnupg &&
	ln -s dotfiles/kube .kube && ln -s ./dotfiles/../dotfiles/docker .docker && ln -s dotfiles/config .config &&
	ln -s editor .vscode && ln -s cfg .claude && ln -s scripts/envrc .envrc && ln -s ../subkeys sub/.ssh)
secrets="dotfiles/aws/credentials dotfiles/ssh/id_test dotfiles/gnupg/secring dotfiles/kube/config
	dotfiles/docker/config.json dotfiles/config/vault-run/config"
readonly="editor/tasks.json cfg/commands/x.md scripts/envrc"
sums() { (cd "$P" && find . -type f -print0 | sort -z | xargs -0 sha256sum); }

# Control: on the host, through the links and the targets alike.
vr_check "control: the secrets are there under both names on the host" \
	sh -c "cd '$P' && cat .aws/credentials .ssh/id_test dotfiles/kube/config .docker/config.json | grep -c SECRET | grep -qx 4"
vr_check "control: the read-only targets are writable on a plain directory" \
	sh -c "cp -a '$P' '$T/plain' && cd '$T/plain' && for f in $readonly; do echo x >>\$f || exit 1; done"
before=$(sums)

"$VR" --project "$P" --profile none --audit "$T/audit.jsonl" -- sh -c '
	cd "$1" || exit 1
	for f in .aws/credentials .ssh/id_test .gnupg/secring .kube/config .docker/config.json .config/vault-run/config \
		'"$(echo $secrets)"'; do
		cat "$f" 2>/dev/null | grep -q SECRET && echo "read $f"
	done
	for f in '"$readonly"' .vscode/tasks.json .claude/commands/x.md .envrc; do
		{ echo planted >>"$f"; } 2>/dev/null && echo "wrote $f"
	done
	{ echo planted >editor/new.json; } 2>/dev/null && echo "wrote editor/new.json"
	{ echo planted >cfg/commands/new.md; } 2>/dev/null && echo "wrote cfg/commands/new.md"
	echo notes >cfg/notes.md && echo "cfg-notes-ok"
	ls sub/.ssh >/dev/null 2>&1 # the link is met: its target is hidden from now on
	cat subkeys/id_sub 2>/dev/null | grep -q SECRET && echo "read subkeys/id_sub"
	# The late link: read once, then the host links .gnupg2... (see below).
	cat late/secring | grep -q SECRET && echo "late-before-ok"
	touch late-ready
	for i in $(seq 100); do [ -e late-go ] && break; sleep 0.05; done
	for i in $(seq 60); do cat late/secring 2>/dev/null | grep -q SECRET || break; sleep 0.05; done
	cat late/secring 2>/dev/null | grep -q SECRET && echo "read late/secring"
	true' sh "$P" >"$T/out" 2>"$T/err" &
run=$!
for i in $(seq 200); do [ -e "$P/late-ready" ] && break; sleep 0.05; done
# The host makes a link while the agent runs (the root is watched).
rm -rf "$P/.gnupg"
ln -s late "$P/.gnupg"
touch "$P/late-go"
wait "$run" || vr_fail "the sandbox run failed: $(cat "$T/err")"
cat "$T/out"
vr_check "no secret was read under any name" test -z "$(grep '^read ' "$T/out" || true)"
vr_check "no read-only target was written" test -z "$(grep '^wrote ' "$T/out" || true)"
vr_check "what no rule covers stays writable (cfg/notes.md)" grep -qx cfg-notes-ok "$T/out"
vr_check "the late target was readable before the host linked it" grep -qx late-before-ok "$T/out"
rm -f "$P/cfg/notes.md" "$P/late-ready" "$P/late-go"
rm "$P/.gnupg" && ln -s dotfiles/gnupg "$P/.gnupg"
vr_check "the host files are byte-identical" test "$(sums)" = "$before"
for f in dotfiles/aws/credentials dotfiles/kube/config editor/tasks.json; do
	vr_check "a refusal of $f is audited" grep -q '"path":"'"${f%%/*}"'.*"result":"\(hidden\|readonly\)"' "$T/audit.jsonl"
done
vr_check "the audit names the link's rule for the target" grep -q '"rule":".aws/"' "$T/audit.jsonl"
vr_done
