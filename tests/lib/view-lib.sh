# view-lib.sh — helpers shared by the tests/integration/view-*.sh tests.
# Source after libtest.sh.

# view_make_demo DIR — vr_make_demo, tolerant of demo files the test user
# cannot read (a checkout may leave the fake id_rsa 0600 root): those are
# replaced by a fake of the same kind so the project keeps its shape.
view_make_demo() {
	local dir=$1 f
	if vr_make_demo "$dir" 2>/dev/null; then return 0; fi
	rm -rf "$dir"
	mkdir -p "$dir"
	(cd "$VR_SOURCE_DIR/examples/demo-project" && find . -type d) | while read -r f; do mkdir -p "$dir/$f"; done
	(cd "$VR_SOURCE_DIR/examples/demo-project" && find . -type f) | while read -r f; do
		if [ -r "$VR_SOURCE_DIR/examples/demo-project/$f" ]; then
			cp --preserve=timestamps "$VR_SOURCE_DIR/examples/demo-project/$f" "$dir/$f"
		else
			printf -- '-----BEGIN OPENSSH PRIVATE KEY-----\nFAKEFAKEFAKE\n-----END OPENSSH PRIVATE KEY-----\n' >"$dir/$f"
		fi
	done
	git -C "$dir" init -q
	git -C "$dir" -c user.name=t -c user.email=t@e add -A .
	git -C "$dir" -c user.name=t -c user.email=t@e commit -qm init
	printf '#!/bin/sh\necho hook ran\n' >"$dir/.git/hooks/pre-commit"
	chmod +x "$dir/.git/hooks/pre-commit"
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
