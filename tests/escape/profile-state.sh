#!/usr/bin/env bash
# A profile's state is persistence (issue 16, item 5): what the harness keeps
# in the home and the host's harness later runs. Each attack lands on a plain
# bind or directory first (the control), then fails under the profile:
#   ~/.claude.json's mcpServers (commands Claude Code starts on the host):
#     the run works on a copy, only harmless keys come back;
#   a symlinked ~/.claude keeps its guard (at its real path);
#   the script settings.json names as statusLine is read-only;
#   ~/.cache/opencode (node_modules it imports) is a per-run
#     tmpfs, never the host's;
#   ~/.claude/local (Claude Code's local install, run by the host's alias) is
#     read-only, ~/.claude/shell-snapshots (sourced by a live host session
#     before each command) a per-run tmpfs;
#   what the other harnesses run or obey from their state directories
#     (opencode's bin/, aider's oauth-keys.env, codex's rules/ and hooks,
#     gemini's policies/, Copilot CLI's pkg/ and agents/, claude's rules/
#     and session-env/) is read-only or a per-run tmpfs.
. "$(dirname "$0")/../lib/libtest.sh"
. "$(dirname "$0")/../lib/sandbox-lib.sh"
vr_require_sandbox

P="$T/project"
vr_make_demo "$P"
export HOME="$T/home"
mkdir -p "$HOME" "$T/dotfiles/claude/commands" "$T/dotfiles/claude/projects"
# ~/.claude is a symlink (stow and other dotfile managers make them).
ln -s "$T/dotfiles/claude" "$HOME/.claude"
C="$T/dotfiles/claude"
printf '{"statusLine":{"type":"command","command":"bash ~/.claude/statusline.sh"}}\n' >"$C/settings.json"
echo 'echo status' >"$C/statusline.sh"
# Claude Code's local install (the shell alias claude=~/.claude/local/claude)
# and the shell snapshot a live host session sources before every command.
mkdir -p "$C/local" "$C/shell-snapshots"
printf '#!/bin/sh\nexec true\n' >"$C/local/claude"
echo 'export PATH=/usr/bin' >"$C/shell-snapshots/snapshot-bash-1-host.sh"
printf '{"numStartups": 3, "mcpServers": {}, "projects": {"%s": {"history": [], "allowedTools": []}}}\n' "$P" >"$HOME/.claude.json"
mkdir -p "$HOME/.cache/opencode/node_modules" "$HOME/.cache/opencode/bin"
echo 'module.exports = {}' >"$HOME/.cache/opencode/node_modules/provider.js"
echo '#!/bin/sh' >"$HOME/.cache/opencode/bin/rg"
# World-writable, so that as host root the agent's uid could write them too:
# only the views stand in the way.
chmod -R a+rwX "$T/dotfiles" "$HOME/.cache"
chmod a+rw "$HOME/.claude.json"
sums() { find "$C" "$HOME/.cache" -type f -exec sha256sum {} + | sort; }
before=$(sums)
cd "$P"

# 1. ~/.claude.json: mcpServers planted, history and a counter changed.
# A plain write (a rename over a bind of one file fails, as it does in any
# sandbox that binds the file; Claude Code falls back to writing in place).
PLANT="sed 's|\"mcpServers\": {}|\"mcpServers\": {\"evil\": {\"command\": \"touch\", \"args\": [\"$T/pwned\"]}}|; s|\"numStartups\": 3|\"numStartups\": 4|; s|\"history\": \[\]|\"history\": [\"hello\"]|; s|\"allowedTools\": \[\]|\"allowedTools\": [\"Bash(*)\"]|' ~/.claude.json >~/j.tmp && cat ~/j.tmp >~/.claude.json; echo p=\$?"
cp "$HOME/.claude.json" "$T/plain.json"
(HOME=$T/plainhome; mkdir -p "$HOME"; cp "$T/plain.json" "$HOME/.claude.json"; sh -c "$PLANT" >/dev/null; cp "$HOME/.claude.json" "$T/plain.json")
vr_check "control: on the plain file mcpServers lands" grep -q '"evil"' "$T/plain.json"
LOG="$T/claude.jsonl"
out=$("$VR" --project "$P" --profile claude --net none --quiet --audit "$LOG" -- sh -c "$PLANT; cat ~/.claude.json" 2>&1) || true
vr_check "inside, the agent edits its copy" grep -q '"evil"' <<<"$out"
vr_check "no mcpServers reach the host's ~/.claude.json" bash -c "! grep -q evil '$HOME/.claude.json'"
vr_check "… nor allowedTools" bash -c "! grep -q 'Bash' '$HOME/.claude.json'"
vr_check "the harmless keys come back: numStartups" grep -q '"numStartups" *: *4' "$HOME/.claude.json"
vr_check "… and the project's history" grep -q '"hello"' "$HOME/.claude.json"
vr_check "the merge is a record saying what was left out" \
	grep -q '"op":"merge".*"not_merged":"mcpServers,projects\.[^"]*\.allowedTools"' "$LOG"
vr_check "no copy is left in the state directory" bash -c "! ls -d '$XDG_STATE_HOME'/vault-run/*/copy-* 2>/dev/null"

# 2. The symlinked ~/.claude: its settings and the statusLine script they name.
ATTACK="echo '{\"hooks\":\"evil\"}' >~/.claude/settings.json; echo s1=\$?
echo 'touch $T/pwned' >>~/.claude/statusline.sh; echo s2=\$?
echo evil >~/.claude/commands/new.md; echo s3=\$?
echo session >~/.claude/projects/s.jsonl; echo s4=\$?"
cp -a "$C" "$T/plain-claude"
"$VR" --project "$P" --profile none --net none --quiet --bind "$T/plain-claude" "$HOME/.claude" -- sh -c "$ATTACK" >/dev/null 2>&1 || true
vr_check "control: bound without the profile the settings write lands" grep -q evil "$T/plain-claude/settings.json"
vr_check "control: … and so does the statusLine script" grep -q pwned "$T/plain-claude/statusline.sh"
rm -f "$LOG"
out=$("$VR" --project "$P" --profile claude --net none --quiet --audit "$LOG" -- sh -c "$ATTACK" 2>&1) || true
echo "$out"
vr_check "settings.json behind the symlink stays read-only" grep -qx 's1=[12]' <<<"$out"
vr_check "the statusLine script the settings name is read-only" grep -qx 's2=[12]' <<<"$out"
vr_check "commands/ gets no new file" grep -qx 's3=[12]' <<<"$out"
vr_check "sessions are still written" grep -qx 's4=0' <<<"$out"
vr_check "… at the real path, audited there" grep -q "\"root\":\"$C\",\"op\":\"create\",\"path\":\"projects/s.jsonl\"" "$LOG"
vr_check "the refusals name the guard's rule" grep -q "\"root\":\"$C\".*\"result\":\"readonly\".*\"rule_source\":\"profile claude" "$LOG"
rm -f "$C/projects/s.jsonl"

# 3. opencode's cache: a provider it imports, the rg it runs.
ATTACK="mkdir -p ~/.cache/opencode/node_modules && echo 'require(\"child_process\").execSync(\"touch $T/pwned\")' >~/.cache/opencode/node_modules/provider.js; echo s1=\$?
echo 'touch $T/pwned' >>~/.cache/opencode/bin/rg 2>/dev/null; echo s2=\$?; ls ~/.cache/opencode"
cp -a "$HOME/.cache/opencode" "$T/plain-cache"
"$VR" --project "$P" --profile none --net none --quiet --bind "$T/plain-cache" "$HOME/.cache/opencode" -- sh -c "$ATTACK" >/dev/null 2>&1 || true
vr_check "control: a writable cache takes the planted provider" grep -q pwned "$T/plain-cache/node_modules/provider.js"
out=$("$VR" --project "$P" --profile opencode --net none --quiet -- sh -c "$ATTACK" 2>&1) || true
vr_check "inside, opencode's cache is writable (its own, for the run)" grep -qx 's1=0' <<<"$out"
vr_check_not "… and empty: the host's cache is not in it" grep -qx bin <<<"$out"
# 4. What the host's Claude Code runs from ~/.claude besides its settings:
# the local install and a live session's shell snapshot.
ATTACK="echo 'touch $T/pwned' >>~/.claude/local/claude; echo s1=\$?
echo 'touch $T/pwned' >~/.claude/local/node; echo s2=\$?
echo 'touch $T/pwned' >>~/.claude/shell-snapshots/snapshot-bash-1-host.sh; echo s3=\$?
echo mine >~/.claude/shell-snapshots/snapshot-bash-2-run.sh; echo s4=\$?"
"$VR" --project "$P" --profile none --net none --quiet --bind "$T/plain-claude" "$HOME/.claude" -- sh -c "$ATTACK" >/dev/null 2>&1 || true
vr_check "control: bound without the profile the local install takes the write" grep -q pwned "$T/plain-claude/local/claude"
vr_check "control: … and so does the host session's snapshot" grep -q pwned "$T/plain-claude/shell-snapshots/snapshot-bash-1-host.sh"
rm -f "$LOG"
out=$("$VR" --project "$P" --profile claude --net none --quiet --audit "$LOG" -- sh -c "$ATTACK" 2>&1) || true
echo "$out"
vr_check "the local install is read-only" grep -qx 's1=[12]' <<<"$out"
vr_check "… and gets no new file" grep -qx 's2=[12]' <<<"$out"
vr_check "the refusal is audited" grep -q "\"root\":\"$C\".*\"path\":\"local/claude\".*\"result\":\"readonly\"" "$LOG"
vr_check "the run's Claude can make its own shell snapshot" grep -qx 's4=0' <<<"$out"
vr_check_not "… in a directory of its own, not the host's" test -e "$C/shell-snapshots/snapshot-bash-2-run.sh"
vr_check "the host's state and caches are byte-identical" test "$(sums)" = "$before"
vr_check_not "nothing ran on the host" test -e "$T/pwned"

# 5. What each other harness runs or obeys from its state directory: a file
# that exists on the host (overwritten) or not yet (created). Each planted
# path lands through a plain bind of the directory (the control) and is
# refused under the profile, audited in the directory's view.
#   opencode: bin/rg (and the language servers it downloads there);
#   aider: oauth-keys.env, a dotenv it loads before reading AIDER_LINT_CMD & co;
#   codex: AGENTS.override.md (read instead of AGENTS.md), rules/ (execpolicy
#     "allow"), skills/, plugins/, hooks.json;
#   copilot: agents/, skills/, copilot-instructions.md;
#   gemini: policies/ (tools allowed unasked), agents/, skills/,
#     trustedFolders.json;
#   claude: rules/.
mkdir -p "$HOME/.local/share/opencode/bin" "$HOME/.aider" "$HOME/.codex/rules" "$HOME/.copilot/agents" "$C/rules" \
	"$HOME/.gemini/policies"
echo '#!/bin/sh' >"$HOME/.local/share/opencode/bin/rg"
echo 'OPENROUTER_API_KEY=host' >"$HOME/.aider/oauth-keys.env"
echo '# host rules' >"$HOME/.codex/rules/default.rules"
echo 'host agent' >"$HOME/.copilot/agents/a.agent.md"
echo '# host policy' >"$HOME/.gemini/policies/p.toml"
chmod -R a+rwX "$HOME/.local" "$HOME/.aider" "$HOME/.codex" "$HOME/.copilot" "$HOME/.gemini"
plant() { # DIR PATH... — a line "PATH=STATUS" for each
	local d=$1 f
	shift
	printf 'cd %s\n' "$d"
	for f in "$@"; do
		printf 'mkdir -p "$(dirname %s)" 2>/dev/null; echo "touch %s/pwned" >>%s; echo %s=$?\n' "$f" "$T" "$f" "$f"
	done
}
state_sums() { find "$HOME/.local/share/opencode" "$HOME/.aider" "$HOME/.codex" "$HOME/.copilot" "$HOME/.gemini" "$C" \
	-path "$C/projects" -prune -o -type f -exec sha256sum {} + 2>/dev/null | sort; }
for spec in \
	"opencode|$HOME/.local/share/opencode|bin/rg bin/gopls" \
	"aider|$HOME/.aider|oauth-keys.env" \
	"codex|$HOME/.codex|AGENTS.override.md rules/default.rules rules/new.rules skills/s/SKILL.md plugins/p/plugin.json hooks.json hooks/h.json memories/m.md" \
	"copilot|$HOME/.copilot|agents/a.agent.md hooks/h.json skills/s/SKILL.md copilot-instructions.md" \
	"gemini|$HOME/.gemini|policies/p.toml policies/new.toml agents/a.md skills/s/SKILL.md trustedFolders.json" \
	"claude|$HOME/.claude|rules/r.md"; do
	IFS='|' read -r prof dir files <<<"$spec"
	real=$(readlink -f "$dir") # where its view is: the audit's root
	# shellcheck disable=SC2086
	ATTACK=$(plant "$dir" $files)
	rm -rf "$T/plain-state"
	cp -a "$real" "$T/plain-state"
	# shellcheck disable=SC2086
	out=$("$VR" --project "$P" --profile none --net none --quiet --bind "$T/plain-state" "$dir" -- sh -c "$ATTACK" 2>&1) || true
	for f in $files; do
		vr_check "control: $prof's $f takes the write on a plain bind" grep -q pwned "$T/plain-state/$f"
	done
	before=$(state_sums)
	rm -f "$LOG"
	out=$("$VR" --project "$P" --profile "$prof" --net none --quiet --audit "$LOG" -- sh -c "$ATTACK" 2>&1) || true
	for f in $files; do
		vr_check "$prof: $f is read-only inside" grep -qx "$f=[12]" <<<"$out"
	done
	vr_check "$prof: the host's state is byte-identical" test "$(state_sums)" = "$before"
	vr_check "$prof: the refusal is audited in the directory's view" \
		grep -q "\"root\":\"$real\".*\"path\":\"${files%% *}\".*\"result\":\"readonly\"" "$LOG"
done
rm -rf "$T/plain-state"

# 6. What a live host session sources or the host's harness runs first
# from a directory the run needs to write: Claude Code's session-env/ (the
# CLAUDE_ENV_FILE its SessionStart hooks wrote, sourced before each
# command) and Copilot CLI's pkg/ (it runs the newest version unpacked
# there), and gemini's history/ (the shadow repository of its checkpoints,
# whose .gitconfig its git commands take as their global config). The run
# gets empty directories of its own.
mkdir -p "$C/session-env/host-session" "$HOME/.copilot/pkg/universal/1.0.0" "$HOME/.gemini/history/host"
printf '[user]\n\tname = Gemini CLI\n' >"$HOME/.gemini/history/host/.gitconfig"
echo 'export A=1' >"$C/session-env/host-session/hook-0.sh"
echo '// host copilot' >"$HOME/.copilot/pkg/universal/1.0.0/index.js"
chmod -R a+rwX "$C/session-env" "$HOME/.copilot/pkg" "$HOME/.gemini/history"
for spec in "claude|$HOME/.claude|session-env/host-session/hook-0.sh|session-env/run/hook-0.sh" \
	"copilot|$HOME/.copilot|pkg/universal/1.0.0/index.js|pkg/universal/99.0.0/index.js" \
	"gemini|$HOME/.gemini|history/host/.gitconfig|history/run/.gitconfig"; do
	IFS='|' read -r prof dir host mine <<<"$spec"
	real=$(readlink -f "$dir")
	ATTACK="cd $dir; echo 'touch $T/pwned' >>$host; echo s1=\$?; mkdir -p \$(dirname $mine); echo 'touch $T/pwned' >$mine; echo s2=\$?"
	rm -rf "$T/plain-state"
	cp -a "$real" "$T/plain-state"
	"$VR" --project "$P" --profile none --net none --quiet --bind "$T/plain-state" "$dir" -- sh -c "$ATTACK" >/dev/null 2>&1 || true
	vr_check "control: $prof's $host takes the write on a plain bind" grep -q pwned "$T/plain-state/$host"
	before=$(state_sums)
	out=$("$VR" --project "$P" --profile "$prof" --net none --quiet -- sh -c "$ATTACK; ls $dir/$(dirname "$host") 2>&1" 2>&1) || true
	vr_check "$prof: the host's $host is out of reach inside" grep -qx 's1=[12]' <<<"$out"
	vr_check "$prof: the run's harness writes $mine (its own directory)" grep -qx 's2=0' <<<"$out"
	vr_check "$prof: the host's state is byte-identical" test "$(state_sums)" = "$before"
	vr_check_not "$prof: … and has no $mine" test -e "$real/$mine"
done
rm -rf "$T/plain-state"
vr_check_not "nothing ran on the host" test -e "$T/pwned"
vr_done
