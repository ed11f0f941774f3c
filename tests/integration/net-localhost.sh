#!/usr/bin/env bash
# `--net allow-localhost=PORT`: a scripted OpenAI-compatible server on the
# host's 127.0.0.1 (tests/helpers/openai-server.py) reached from inside the
# sandbox's own netns at 127.0.0.1:PORT. The http form lets through only the
# inference and listing paths, on every request of a kept-alive connection,
# and refuses the request smuggling shape; the tcp form carries the whole
# port; both are audited as connect events. The server's own log shows what
# really reached it: a refused request never does.
. "$(dirname "$0")/../lib/libtest.sh"
. "$(dirname "$0")/../lib/view-lib.sh"
. "$(dirname "$0")/../lib/sandbox-lib.sh"
. "$(dirname "$0")/../lib/opencode-lib.sh"
vr_require_cmd curl python3
vr_require_sandbox

P="$T/project"
view_make_demo "$P"
cd "$P"

# --- the model server on the host's loopback ------------------------------
vr_model_server
vr_check "control: /api/pull answers 200 on the host (a refusal inside is the bridge's)" \
	bash -c "curl -s -f -m 20 --noproxy '*' -X POST -d '{}' http://127.0.0.1:$MP/api/pull | grep -q success"
: >"$T/served.log"

# run NAME VR-ARGS... -- SCRIPT: SCRIPT in the sandbox, stdout in $T/NAME.out,
# the run's audit log in $T/NAME.audit.
run() {
	local name=$1; shift
	local args=()
	while [ "$1" != -- ]; do args+=("$1"); shift; done
	shift
	"$VR" --project "$P" --profile none --audit "$T/$name.audit" "${args[@]}" -- bash -c "$1" \
		>"$T/$name.out" 2>"$T/$name.err" || true
}
# events NAME: the run's connect events.
events() { grep '"op":"connect"' "$T/$1.audit" || true; }

U="http://127.0.0.1:$MP"
# Raw requests from bash's /dev/tcp, so the bytes are exactly these.
RAW='exec 3<>/dev/tcp/127.0.0.1/'$MP'; printf "$1" >&3; timeout 10 cat <&3; exec 3<&-'

run http --net allow-localhost=$MP/http -- "
	curl -s -m 20 $U/v1/models; echo
	curl -s -m 20 -H 'Content-Type: application/json' -d '{\"stream\":true}' $U/v1/chat/completions | grep -c PONG
	# one kept-alive connection: the second request is refused, and the
	# connection closed after it (curl opens another for the third)
	curl -s -m 20 -w '%{http_code}\n' $U/api/tags --next -s -m 20 -w '%{http_code}\n' -X POST -d '{}' $U/api/pull \
		--next -s -m 20 -w '%{http_code}\n' $U/api/tags
	raw() { $RAW; }
	raw 'POST /api/chat HTTP/1.1\r\nHost: x\r\nContent-Length: 6\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\nGET /api/pull HTTP/1.1\r\n\r\n' | head -1
	raw 'GET /api/tags HTTP/1.1\r\nHost: x\r\nTransfer-Encoding : chunked\r\n\r\n' | head -1
	# the rest of a refused request sent after its 400 has come: the bridge
	# must not close on unread bytes, or the client gets a reset and loses
	# the 400 it was about to read
	( exec 3<>/dev/tcp/127.0.0.1/$MP
	  printf 'POST /api/chat HTTP/1.1\\r\\nHost: x\\r\\nContent-Length: 6\\r\\nTransfer-Encoding: chunked\\r\\n\\r\\n' >&3
	  sleep 0.3; printf '0\\r\\n\\r\\n' >&3; timeout 10 cat <&3 | head -1 )
	curl -s -m 20 http://localhost:$MP/api/tags | grep -c fake-model
	curl -s -m 20 -g 'http://[::1]:$MP/api/tags' | grep -c fake-model || echo no-ipv6
"
vr_check "GET /v1/models through the bridge" grep -q '"fake-model"' <(sed -n 1p "$T/http.out")
vr_check "a streamed chat completion through the bridge" grep -qx 1 <(sed -n 2p "$T/http.out")
vr_check "kept-alive connection: /api/tags, then /api/pull refused (403)" \
	bash -c "sed -n 3p '$T/http.out' | grep -q '\"fake-model\".*200' && sed -n 5p '$T/http.out' | grep -qx 403"
vr_check "… the refusal names vault-run, the path and /tcp" \
	grep -q 'vault-run: POST /api/pull to the host.s 127.0.0.1:'$MP' refused.*allow-localhost='$MP'/tcp' "$T/http.out"
vr_check "Content-Length with Transfer-Encoding, a space before a colon, a refused body sent late → 400 each" \
	test "$(grep -c '^HTTP/1.1 400' "$T/http.out")" = 3
vr_check "localhost works too" grep -qx 1 <(tail -n 2 "$T/http.out" | head -1)
vr_check "… and ::1 (or IPv6 is off here)" grep -Eqx '1|no-ipv6' <(tail -n 1 "$T/http.out")
vr_check_not "no refused request reached the server" grep -q '/api/pull' "$T/served.log"
vr_check "the server saw the allowed ones" grep -q 'POST /v1/chat/completions' "$T/served.log"
vr_check "audit: an ok event per request, with method, path and status" \
	grep -q '"proto":"localhost-http","host":"127.0.0.1","port":'$MP',"result":"ok","rule":"allow-localhost='$MP'/http".*"method":"GET","path":"/v1/models","status":200' <(events http)
vr_check "audit: the refused path, denied" \
	grep -q '"result":"denied".*"method":"POST","path":"/api/pull"' <(events http)
vr_check "audit: the smuggling shape, denied" grep -q '"result":"denied".*"reason":"both Content-Length and Transfer-Encoding' <(events http)
vr_check "audit: the field with a space before its colon, denied" grep -q '"result":"denied".*NAME: VALUE' <(events http)
vr_check "vault-run audit lists a bridged request with its method and path" \
	grep -q "denied .*127.0.0.1:$MP POST /api/pull" <("$VR" audit --op connect "$T/http.audit")
[ "$vr_failures" = 0 ] || { cat "$T/http.out" "$T/http.err"; }

: >"$T/served.log"
run tcp --net "allow=localhost;allow-localhost=$MP/tcp" -- "
	curl -s -m 20 -X POST -d '{}' $U/api/pull; echo
	curl -s -m 20 --noproxy '' -x \"\$HTTP_PROXY\" -o /dev/null -w '%{http_code}\n' $U/api/tags
"
vr_check "the tcp form carries the whole port (/api/pull reached the server)" grep -q 'POST /api/pull' "$T/served.log"
vr_check "… audited as one connect event" grep -q '"proto":"localhost","host":"127.0.0.1","port":'$MP',"result":"ok","rule":"allow-localhost='$MP'/tcp"' <(events tcp)
vr_check "combined with allow= in one value: the proxy still refuses loopback names (403)" grep -qx 403 <(sed -n 2p "$T/tcp.out")

run direct --net allow=localhost -- "curl -s -m 10 -o /dev/null $U/v1/models; echo direct=\$?"
vr_check "without allow-localhost the port is not reachable (own netns)" grep -q 'direct=7' "$T/direct.out"

# A port nothing listens on: the client hears it from vault-run.
FREE=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
run down --net allow-localhost=$FREE/http -- "curl -s -m 20 -w '\n%{http_code}\n' $U/v1/models | sed 's/$MP/$FREE/'; curl -s -m 20 -w '%{http_code}' http://127.0.0.1:$FREE/v1/models"
vr_check "a bridged port with no server → 502 naming vault-run" grep -q "vault-run: nothing answers on the host's 127.0.0.1:$FREE" "$T/down.out"
vr_check "… audited as failed" grep -q '"result":"failed"' <(events down)

# The config's net = and --dry-run.
mkdir -p "$T/xdg/vault-run"
printf '[sandbox]\nnet = allow=example.com; allow-localhost=%s/http\n' "$MP" >"$T/xdg/vault-run/config"
XDG_CONFIG_HOME="$T/xdg" run config -- "curl -s -m 20 $U/api/tags | grep -c fake-model"
vr_check "config net = allow=…; allow-localhost=… bridges the port" grep -qx 1 "$T/config.out"
dry=$(XDG_CONFIG_HOME="$T/xdg" "$VR" --project "$P" --profile none --dry-run -- true)
vr_check "--dry-run names the bridge and its form" \
	grep -q "^net: localhost $MP -> the host's 127.0.0.1:$MP (http: inference and listing paths only)" <<<"$dry"
vr_check "--dry-run keeps the allow list" grep -q "^net: allow example.com" <<<"$dry"
dry=$("$VR" --project "$P" --profile none --dry-run --net allow-localhost=11434,9999 -- true)
vr_check "a known model-server port (ollama's) is filtered by default" grep -q '^net: localhost 11434 .*(http' <<<"$dry"
vr_check "… another port is bridged whole" grep -q '^net: localhost 9999 .*(tcp' <<<"$dry"

for bad in allow-localhost=3128 allow-localhost=0 allow-localhost=11434/udp 'allow-localhost=11434,11434/tcp'; do
	st=0
	"$VR" --project "$P" --profile none --net "$bad" -- true 2>"$T/bad.err" || st=$?
	vr_check "--net $bad is refused with 125, naming it" \
		bash -c "[ $st = 125 ] && grep -q 'allow-localhost' '$T/bad.err'"
done
vr_done
