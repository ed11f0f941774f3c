# A loopback HTTPS origin with its own test CA, for the key tests (source
# after libtest.sh). vr_origin_start SCRIPT NAME... makes $O (a CA, and a
# leaf for every NAME.origin.test), starts tests/helpers/SCRIPT on it (the
# caller's environment reaches it: LEAK=…, SSE_PAUSE=…), waits for its port
# ($OP) and points vault-run-testhooks at it: VR_TEST_RESOLVE sends each
# name to 127.0.0.1, VR_TEST_UPSTREAM_PORT replaces 443, VR_TEST_UPSTREAM_CA
# is trusted upstream. The origin's log is $O/log.
# vr_origin_require — what every key test needs (source sandbox-lib.sh
# first): curl, python3, openssl, a sandbox that starts, and the test
# build's vault-run-testhooks in $VRT.
vr_origin_require() {
	vr_require_cmd curl python3 openssl
	vr_require_sandbox
	VRT="$VR_BIN/vault-run-testhooks"
	[ -x "$VRT" ] || vr_fail "no $VRT"
}

vr_origin_start() {
	local script=$1 n san="" resolve=""
	shift
	for n in "$@"; do
		san+="${san:+,}DNS:$n.origin.test"
		resolve+="${resolve:+,}$n.origin.test=127.0.0.1"
	done
	O="$T/origin"
	mkdir -p "$O"
	local ec=(-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes)
	openssl req -x509 "${ec[@]}" -keyout "$O/ca.key" -out "$O/ca.pem" -days 2 -subj /CN=vr-test-origin-ca \
		-addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign 2>/dev/null
	openssl req -new "${ec[@]}" -keyout "$O/leaf.key" -out "$O/leaf.csr" -subj "/CN=$1.origin.test" 2>/dev/null
	printf 'subjectAltName=%s\nextendedKeyUsage=serverAuth\n' "$san" >"$O/ext"
	openssl x509 -req -in "$O/leaf.csr" -CA "$O/ca.pem" -CAkey "$O/ca.key" -CAcreateserial -days 2 \
		-extfile "$O/ext" -out "$O/leaf.pem" 2>/dev/null
	cat "$O/leaf.pem" "$O/ca.pem" "$O/leaf.key" >"$O/server.pem"
	python3 "$VR_SOURCE_DIR/tests/helpers/$script" "$O/server.pem" "$O/port" "$O/log" >"$O/out" 2>&1 &
	vr_mount_pids+=("$!")
	for _ in $(seq 1 200); do [ -s "$O/port" ] && break; sleep 0.05; done
	[ -s "$O/port" ] || { cat "$O/out"; vr_fail "the origin did not start"; vr_done; exit; }
	OP=$(cat "$O/port")
	export VR_TEST_RESOLVE=$resolve VR_TEST_UPSTREAM_PORT=$OP VR_TEST_UPSTREAM_CA=$O/ca.pem
}
