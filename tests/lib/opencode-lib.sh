# opencode-lib.sh — the scripted model server (tests/helpers/openai-server.py)
# and the opencode harness's set-up, for the tests that run opencode or talk
# to the server (after libtest.sh and sandbox-lib.sh).

# vr_model_server [NAME=VALUE...] — starts the server on the host's loopback
# with those variables (REPLY, TLS_CERT, TOOL_COMMAND: see the helper), its
# requests logged in $T/served.log; sets MP to its port, or fails the test.
vr_model_server() {
	env "$@" python3 -u "$VR_SOURCE_DIR/tests/helpers/openai-server.py" "$T/served.log" >"$T/srv.out" 2>&1 &
	vr_mount_pids+=("$!")
	MP=
	for _ in $(seq 1 600); do
		MP=$(sed -n 's/^port \([0-9]*\)$/\1/p' "$T/srv.out")
		[ -n "$MP" ] && break
		sleep 0.05
	done
	[ -n "$MP" ] || { cat "$T/srv.out"; vr_fail "the model server did not start"; vr_done; }
}

# vr_opencode_setup — skips without opencode (npm opencode-ai, installed by
# .ci/run); a private HOME and the demo project in $P.
vr_opencode_setup() {
	command -v opencode >/dev/null || vr_skip "opencode is not installed (npm install -g opencode-ai)"
	vr_require_cmd python3
	vr_require_sandbox
	export HOME="$T/home" XDG_CONFIG_HOME="$T/home/.config"
	mkdir -p "$HOME"
	P="$T/project"
	vr_make_demo "$P"
}

# vr_opencode_provider ID DESCRIPTION BASE-URL API-KEY — $P/opencode.json
# with one OpenAI-compatible provider (https://opencode.ai/docs/providers,
# "Custom provider") and its model ID/fake-model as the default.
vr_opencode_provider() {
	cat >"$P/opencode.json" <<JSON
{
  "\$schema": "https://opencode.ai/config.json",
  "provider": {
    "$1": {
      "npm": "@ai-sdk/openai-compatible",
      "name": "$2",
      "options": { "baseURL": "$3", "apiKey": "$4" },
      "models": { "fake-model": { "name": "fake model" } }
    }
  },
  "model": "$1/fake-model",
  "autoupdate": false,
  "share": "disabled"
}
JSON
}
