# view-lib.sh — helpers shared by the tests/integration/view-*.sh tests.
# Source after libtest.sh.

# view_make_demo DIR — vr_make_demo, tolerant of demo files the test user
# cannot read (a checkout may leave the fake id_rsa 0600 root): those are
# replaced by a fake of the same kind so the project keeps its shape.
view_make_demo() {
	vr_make_demo "$1" fake
}

# view_wait_file FILE PATTERN [TRIES] — polls until grep finds PATTERN.
view_wait_grep() {
	local file=$1 pat=$2 tries=${3:-200} i
	for i in $(seq 1 "$tries"); do
		grep -q -- "$pat" "$file" 2>/dev/null && return 0
		sleep 0.05
	done
	return 1
}

# view_done — vr_done, showing the daemon's stderr first when a check failed.
view_done() {
	if [ "$vr_failures" -ne 0 ] && [ -s "$T/mount.err" ]; then
		echo "--- vault-run mount stderr (last 40 lines) ---"
		tail -n 40 "$T/mount.err"
	fi
	vr_done
}
