#!/usr/bin/env bash
# Invariant 9, issue 16 routes 3 and 8: the whole persistence list, under
# every file type. The list is read from `vault-run policy show` (the
# built-in table itself, not a copy): every read-only rule, plus the hidden
# directory rules. Each pattern is made a concrete path ("**/" and "*"
# dropped). Two projects:
#  - every name exists (a directory rule: the directory with a file x in
#    it): append, open O_TRUNC, truncate, chmod, rename onto, unlink, and for
#    a directory creating a file, a directory and a symlink inside and
#    moving it away;
#  - no name exists: mkdir, create, symlink (relative, absolute), mkfifo,
#    hard link, rename of a file and of a directory onto the name;
#  - and .git itself as a file or a symlink naming a directory whose hooks
#    the agent wrote (the "where relevant" type of the .git/... entries).
# git's config files (config, config.worktree) pass the config gate and
# have their own attack (gitconfig-gate.sh); a new repository's .git/hooks
# may be made by mkdir (then holds only *.sample files, same test).
# Expected: every call refused, the first project byte-identical, nothing
# of the list made in the second. Control: on plain copies every call works.
. "$(dirname "$0")/../lib/libtest.sh"
. "$(dirname "$0")/../lib/view-lib.sh"
. "$(dirname "$0")/../lib/sandbox-lib.sh"
vr_require_sandbox
[ -x /usr/bin/python3 ] || vr_skip "/usr/bin/python3 is missing (it walks the list inside)"
W="$VR_SOURCE_DIR/tests/helpers/persistence-walk.py"
mkdir -p "$T/bin" "$T/empty"
cp "$W" "$T/bin/walk.py"

# The list, from the built-in table.
"$VR" policy show --project "$T/empty" >"$T/rules"
concrete() { local p=${1#/}; p=${p#\*\*/}; p=${p//\/\*\*\//\/}; p=${p//\*/}; echo "$p"; }
: >"$T/list"
while read -r kind pattern _ why; do
	# git's config files pass the config gate, attacked by gitconfig-gate.sh.
	case $why in *"config gate"*) continue ;; esac
	case $kind in
	readonly) ;;
	hide) case $pattern in */) ;; *) continue ;; esac ;;
	*) continue ;;
	esac
	p=$(concrete "$pattern")
	case $kind:$p in
	hide:*) echo "h ${p%/}" ;;
	*/) echo "d ${p%/}" ;;
	*) echo "f $p" ;;
	esac
done <"$T/rules" >>"$T/list"
n=$(wc -l <"$T/list")
cp "$T/list" "$T/bin/list"
vr_check "the list has every read-only built-in but the gate's ($n entries)" \
	test "$(grep -c '^[df] ' "$T/list")" = "$(grep '^readonly' "$T/rules" | grep -vc 'config gate')"
for must in .devcontainer.json .gemini/settings.json .cursor/mcp.json .claude/hooks .claude/skills \
	lefthook. .lefthook. lefthook-local. .zed .mise.toml mise..toml .aider.conf.yml .pnpmfile.cjs .yarnrc \
	bunfig.toml rust-toolchain.toml .nvim.lua .exrc .git/hooks .husky .githooks .devcontainer .opencode \
	.claude/commands .claude/agents .github/hooks .github/agents .config/vault-run .ssh; do
	vr_check "the list holds $must" grep -qE "^[dfh] $(sed 's/\./\\./g' <<<"$must")\$" "$T/list"
done

# The existing project: each name made, with content to compare.
P="$T/existing"
view_make_demo "$P"
while read -r kind name; do
	[ "$kind" = h ] && continue
	mkdir -p "$P/$(dirname "$name")"
	case $kind in
	d) mkdir -p "$P/$name" && echo orig >"$P/$name/x" ;;
	f) [ -e "$P/$name" ] || echo orig >"$P/$name" ;;
	esac
done <"$T/list"
printf '[policy]\nhide = nothing-here\n' >"$P/.vault-run"
echo . >"$P/.git/commondir" # git reads "." as the .git itself
snap() { (cd "$1" && find . -path ./.git/objects -prune -o -print0 | sort -z | xargs -0 ls -ldn --time-style=+%s.%N |
	awk '{ $6 = ""; print }'; find . -path ./.git/objects -prune -o -type f -print0 | sort -z | xargs -0 sha256sum); }
before=$(snap "$P")

# The absent project: a repository without hooks/, config, info/.
A="$T/absent"
mkdir -p "$A"
git -C "$A" init -q
rm -rf "$A/.git/hooks" "$A/.git/info" "$A/.git/config" "$A/.git/description"

# Controls: on plain copies every call works.
cp -a "$P" "$T/plain-existing"
cp -a "$A" "$T/plain-absent"
/usr/bin/python3 "$W" existing "$T/plain-existing" "$T/list" >"$T/plain-existing.out"
/usr/bin/python3 "$W" absent "$T/plain-absent" "$T/list" >"$T/plain-absent.out"
# What each mode tries (persistence-walk.py), name by name.
expect() {
	local mode=$1 kind name op
	while read -r kind name; do
		if [ "$mode" = existing ]; then
			[ "$kind" = h ] && continue
			for op in append open-trunc truncate chmod rename-onto unlink; do echo "$name $op ok"; done
			[ "$kind" = d ] && for op in create-inside mkdir-inside symlink-inside rename-dir-away; do
				echo "$name $op ok"
			done
		else
			for op in mkdir create symlink-rel symlink-abs mkfifo link rename-file-onto rename-dir-onto; do
				echo "$name $op ok"
			done
		fi
	done <"$T/list" | sort
}
for mode in existing absent; do
	missing=$(comm -23 <(expect $mode) <(grep ' ok$' "$T/plain-$mode.out" | sort) | head -5)
	vr_check "control: on a plain directory every call of the $mode walk works${missing:+ (not: $missing)}" \
		test -z "$missing"
done

for proj in existing absent; do
	dir=$P
	[ $proj = absent ] && dir=$A
	"$VR" --project "$dir" --profile none --audit "$T/$proj.jsonl" --ro-bind "$T/bin" /vr-bin -- \
		/usr/bin/python3 /vr-bin/walk.py $proj "$dir" /vr-bin/list >"$T/$proj.out" 2>"$T/$proj.err" ||
		vr_fail "$proj: the sandbox run failed: $(cat "$T/$proj.err")"
	vr_check "$proj: the walk reached the end" grep -qx "walked $n" "$T/$proj.out"
	# The config gate lets a new repository's hooks/ be made (then only
	# *.sample files in it: escape/gitconfig-gate.sh).
	holes=$(grep ' ok$' "$T/$proj.out" | grep -Ev '^(.*/)?\.git/(modules/)?hooks mkdir ok$' || true)
	[ -z "$holes" ] || echo "$holes"
	vr_check "$proj: every call on every name of the list is refused inside" test -z "$holes"
	vr_check "$proj: the refusals are audited" \
		test "$(grep -c '"result":"\(readonly\|hidden\|EACCES\|EPERM\)"' "$T/$proj.jsonl")" -ge "$n"
done
after=$(snap "$P")
[ "$after" = "$before" ] || diff <(echo "$before") <(echo "$after") | head
vr_check "existing: the project is byte-identical (names, modes, content)" test "$(snap "$P")" = "$before"
made=$(while read -r kind name; do
	case $name in .git/hooks | .git/modules/hooks) [ -d "$A/$name" ] && [ ! -L "$A/$name" ] &&
		[ -z "$(ls -A "$A/$name")" ] && continue ;; # the gate's new hooks/, left empty
	esac
	if [ -e "$A/$name" ] || [ -L "$A/$name" ]; then echo "$name"; fi
done <"$T/list")
vr_check "absent: no name of the list was made (${made//$'\n'/ })" test -z "$made"

# .git as a file or a symlink naming a directory with the agent's hooks.
G="$T/nogit"
mkdir -p "$G"
out=$("$VR" --project "$G" --profile none -- sh -c '
	cd "$1" || exit 1
	mkdir -p evil/hooks && echo "echo x" >evil/hooks/post-checkout
	mkdir -p evil/objects evil/refs 2>/dev/null # refs is refused: hooks/ came first
	{ echo "gitdir: evil" >.git; } 2>/dev/null && grep -q evil .git && echo "gitfile ok"
	rm -f .git
	ln -s evil .git 2>/dev/null && echo "symlink ok"
	true' sh "$G" 2>&1)
echo "$out"
vr_check ".git as a file naming the agent's hooks is refused" test -z "$(grep ' ok$' <<<"$out" || true)"
vr_check "no .git naming evil on the host" test ! -L "$G/.git" -a "$(cat "$G/.git" 2>/dev/null)" = ""
vr_done
