#!/usr/bin/env bash
# run-test.sh VARIANT SCRIPT — runs one shell test as invoked (plain), as an
# unprivileged user (user: uid/gid 65534, no groups) or as root of a fresh user
# namespace (unshare: unshare -r -m).
#
# /dev/fuse is often 0600 root. For the user variant a private mount namespace
# gets its own 0666 node bound over /dev/fuse, so the test user can use FUSE
# without changing the machine.
set -u
variant=$1 script=$2
skip() {
  echo "SKIP: $*"
  if [ "${VR_TESTS_MUST_WORK:-0}" = 1 ]; then
    echo "FAIL: VR_TESTS_MUST_WORK=1 forbids skipping"
    exit 1
  fi
  exit 77
}
case $variant in
plain) exec bash "$script" ;;
user)
  [ "$(id -u)" = 0 ] || skip "the @user variant needs root to drop to uid 65534"
  command -v setpriv >/dev/null || skip "setpriv (util-linux) is missing"
  export VR_TEST_USER=65534
  exec unshare -m --propagation private bash -c '
    set -e
    if [ -c /dev/fuse ]; then
      node=$(mktemp -d /tmp/vr-fuse-node.XXXXXX)
      mknod -m 0666 "$node/fuse" c 10 229
      mount --bind "$node/fuse" /dev/fuse
      rm -rf "$node" 2>/dev/null || true
    fi
    export HOME=/tmp TMPDIR=/tmp
    exec setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all \
      bash "$1"' run-test "$script" ;;
unshare)
  unshare -r -m true 2>/dev/null || skip "unshare -r is not permitted here"
  export VR_TEST_UNSHARE=1
  exec unshare -r -m --propagation private bash "$script" ;;
*) echo "unknown variant $variant" >&2; exit 2 ;;
esac
