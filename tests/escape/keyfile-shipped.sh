#!/usr/bin/env bash
# The shipped harness profiles' key files (docs/network.md "Keys in files"):
# a user who logged in with the harness itself has real tokens in its state
# directory. For each of claude, codex, gemini and opencode, a login file
# of the shape the harness writes, under a private HOME, is read inside
# with only sentinels of the same shape: the agent greps every file it can
# reach for the real values and finds none; a field no declaration names
# (a local model's short key, an expiry) is as it was; --dry-run names each
# declared field bound to its host, or concealed. The control: with the
# profile's [keys] file lines removed (a copy of the profile) the real
# values show, so the greps can see them.
. "$(dirname "$0")/../lib/libtest.sh"
. "$(dirname "$0")/../lib/sandbox-lib.sh"
vr_require_sandbox

vr_private_home
chmod a+rx "$T" "$HOME"

# login NAME: writes NAME's login file; sets FILE and REALS (the values
# that must not be seen inside, by a prefix each).
login() {
	case $1 in
	claude)
		FILE=$HOME/.claude/.credentials.json
		REALS="RealClaudeAccess RealClaudeRefresh"
		mkdir -p "$HOME/.claude"
		printf '{"claudeAiOauth": {"accessToken": "sk-ant-oat01-RealClaudeAccess0123456789abcdefghij", "refreshToken": "sk-ant-ort01-RealClaudeRefresh0123456789abcdefgh", "expiresAt": 1764662400000, "scopes": ["user:inference"], "subscriptionType": "max"}}\n' >"$FILE" ;;
	codex)
		FILE=$HOME/.codex/auth.json
		REALS="RealCodexAccess RealCodexRefresh"
		mkdir -p "$HOME/.codex"
		printf '{"OPENAI_API_KEY": null, "tokens": {"id_token": "eyJhbGciOiJSUzI1NiJ9.eyJlbWFpbCI6InVzZXJAZXhhbXBsZS5jb20ifQ.c2ln", "access_token": "eyJhbGciOiJSUzI1NiJ9.RealCodexAccess0123456789abcdef", "refresh_token": "rt_RealCodexRefresh0123456789abcdefgh", "account_id": "acct-1"}, "last_refresh": "2026-12-01T00:00:00Z"}\n' >"$FILE" ;;
	gemini)
		FILE=$HOME/.gemini/oauth_creds.json
		REALS="RealGeminiAccess RealGeminiRefresh"
		mkdir -p "$HOME/.gemini"
		printf '{"access_token": "ya29.RealGeminiAccess0123456789abcdefghij", "refresh_token": "1//RealGeminiRefresh0123456789abcdefgh", "scope": "openid", "token_type": "Bearer", "expiry_date": 1764662400000}\n' >"$FILE" ;;
	opencode)
		FILE=$HOME/.local/share/opencode/auth.json
		REALS="RealOpenAIKey RealAnthropicAccess RealAnthropicRefresh RealOpenRouter"
		mkdir -p "$HOME/.local/share/opencode"
		cat >"$FILE" <<'EOF'
{
  "openai": {"type": "api", "key": "sk-proj-RealOpenAIKey0123456789abcdefghij"},
  "anthropic": {"type": "oauth", "refresh": "sk-ant-ort01-RealAnthropicRefresh0123456789ab", "access": "sk-ant-oat01-RealAnthropicAccess0123456789abc", "expires": 1764662400000},
  "openrouter": {"type": "api", "key": "sk-or-v1-RealOpenRouter0123456789abcdefghijkl"},
  "ollama": {"type": "api", "key": "ollama"}
}
EOF
		;;
	esac
	chmod -R a+rwX "$(dirname "$FILE")"
}

# inside NAME [VR-ARGS…]: the file as the agent reads it, then every
# readable file under HOME grepped for each real value's marker.
inside() {
	local name=$1; shift
	"$VR" --project "$P" --profile "$name" --net none --quiet "$@" -- sh -c '
		cat "$1"; echo
		shift
		for m in "$@"; do
			hits=$(grep -rl --exclude-dir=.cache "$m" "$HOME" 2>/dev/null | wc -l)
			echo "hits $m $hits"
		done' sh "$FILE" $REALS 2>"$T/$name.err"
}

for name in claude codex gemini opencode; do
	rm -rf "$HOME"/.[a-z]* "$HOME"/.local
	login "$name"
	out=$(inside "$name" || true)
	for m in $REALS; do
		vr_check "$name: no file inside holds $m" grep -qx "hits $m 0" <<<"$out"
	done
	vr_check_not "$name: the login file read inside holds no real value" \
		grep -Eq "$(tr ' ' '|' <<<"$REALS")" <<<"$(grep -v '^hits ' <<<"$out")"
	case $name in
	claude) vr_check "claude: the access token is a sentinel of its shape" grep -Eq '"accessToken": "sk-ant-oat01-[A-Za-z0-9]{30,}"' <<<"$out"
	        vr_check "claude: an undeclared field is as it was" grep -q '"subscriptionType": "max"' <<<"$out" ;;
	codex) vr_check "codex: the id_token is as it was (codex decodes its claims)" grep -q '"id_token": "eyJhbGciOiJSUzI1NiJ9.eyJlbWFpbCI6' <<<"$out" ;;
	gemini) vr_check "gemini: the access token is a sentinel of its shape (ya29. kept)" grep -Eq '"access_token": "ya29\.[A-Za-z0-9]{30,}"' <<<"$out" ;;
	opencode)
		vr_check "opencode: a provider's API key is a sentinel of its shape" grep -Eq '"key": "sk-proj-[A-Za-z0-9]{30,}"' <<<"$out"
		vr_check "opencode: a local model's short key is as it was" grep -q '"key": "ollama"' <<<"$out"
		dry=$("$VR" --project "$P" --profile opencode --dry-run -- true 2>/dev/null)
		vr_check "opencode --dry-run: the API key bound to api.openai.com" \
			grep -q '^key: file:.*opencode/auth.json:openai.key -> api.openai.com as bearer' <<<"$dry"
		vr_check "opencode --dry-run: Anthropic's OAuth access token to api.anthropic.com" \
			grep -q '^key: file:.*opencode/auth.json:anthropic.access -> api.anthropic.com as bearer' <<<"$dry"
		vr_check "opencode --dry-run: the refresh token concealed" \
			grep -q '^key: file:.*opencode/auth.json:anthropic.refresh -> concealed' <<<"$dry"
		vr_check_not "opencode --dry-run: no value" grep -q 'Real' <<<"$dry"
		# A declared field whose value cannot be a key (a placeholder a user
		# typed): left as it is with a warning, the run goes on.
		printf '{"openai": {"type": "api", "key": "test"}}\n' >"$FILE"
		st=0
		out2=$("$VR" --project "$P" --profile opencode --net none --quiet -- cat "$FILE" 2>"$T/short.err") || st=$?
		vr_check "opencode: a declared value too short to be a key: the run goes on (exit $st)" test "$st" = 0
		vr_check "… the value as it is" grep -q '"key": "test"' <<<"$out2"
		vr_check "… with a warning naming the field" grep -q "warning: .*openai.key.*left as it is" "$T/short.err" ;;
	esac

	# The control: the same profile without its key files shows the values.
	login "$name"
	sed '/^file = /d' "$VR_SOURCE_DIR/share/profiles/$name.profile" \
		>"$XDG_CONFIG_HOME/vault-run/profiles/$name.profile"
	out=$(inside "$name" || true)
	rm -f "$XDG_CONFIG_HOME/vault-run/profiles/$name.profile"
	first=${REALS%% *}
	vr_check "$name (control, no [keys] file): the grep sees $first" grep -Eqx "hits $first [1-9][0-9]*" <<<"$out"
done

# A login file that is a symlink into the user's dotfiles (stow links files
# one by one): its values are known and masked wherever the file shows (a
# --ro-bind of the dotfiles directory too), and the agent cannot put a
# symlink of its own at the key file's name.
rm -rf "$HOME"/.[a-z]* "$HOME"/.local "$HOME/dots"
mkdir -p "$HOME/dots" "$HOME/.local/share/opencode"
printf '{"openai": {"type": "api", "key": "sk-proj-RealStowKey0123456789abcdefghij"}}\n' >"$HOME/dots/oc-auth.json"
ln -s ../../../dots/oc-auth.json "$HOME/.local/share/opencode/auth.json"
chmod -R a+rwX "$HOME"
dry=$("$VR" --project "$P" --profile opencode --dry-run -- true 2>/dev/null)
vr_check "a symlinked (stow) login file: its key is bound" \
	grep -q '^key: file:.*dots/oc-auth.json:openai.key -> api.openai.com' <<<"$dry"
out=$("$VR" --project "$P" --profile opencode --net none --quiet --ro-bind "$HOME/dots" /tmp/dots -- sh -c '
	cat /tmp/dots/oc-auth.json; echo
	echo "hits $(grep -rl RealStowKey /tmp/dots "$HOME" 2>/dev/null | wc -l)"
	cd ~/.local/share/opencode && rm -f auth.json && ln -s /tmp/elsewhere auth.json 2>/dev/null; echo "ln=$?"' \
	2>"$T/stow.err" || true)
vr_check "… masked through a --ro-bind of the dotfiles" grep -Eq '"key": "sk-proj-[A-Za-z0-9]{30,}"' <<<"$out"
vr_check "… no file inside holds the real value" grep -qx "hits 0" <<<"$out"
vr_check_not "… not even the one read" grep -q RealStowKey <<<"$(grep -v '^hits' <<<"$out")"
vr_check "… and no symlink of the agent's at the key file's name" grep -qx "ln=1" <<<"$out"
vr_check_not "… on the host either" test -L "$HOME/.local/share/opencode/auth.json"
vr_done
