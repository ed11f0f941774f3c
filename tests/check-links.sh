#!/usr/bin/env bash
# check-links.sh BUILD_DIR: vault-run itself loads glib, libfuse3,
# libseccomp, jansson and libc, not GIO, gobject, json-glib or GnuTLS:
# every process of a run is a fork of it, and each shared object it loads
# costs every run's start (docs/PERFORMANCE.md "Start-up"; docs/HACKING.md).
# Those belong to the helpers it execs only when needed: vault-run-proxy
# (GnuTLS, GIO) and vault-run-systemd (GIO), which the control checks, so
# that the check can fail.
set -euo pipefail
build=$1
needed() { readelf -d "$1" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'; }
heavy='^lib(gio|gobject|json-glib|gnutls|tasn1|p11-kit|nettle|hogweed|gmp)[-.]'
fail=0
bad=$(needed "$build/vault-run" | grep -E "$heavy" || true)
if [ -n "$bad" ]; then
	echo "FAIL: vault-run links $(echo $bad): move what needs it into a helper executable (docs/HACKING.md)"
	fail=1
else
	echo "ok: vault-run links $(needed "$build/vault-run" | tr '\n' ' ')"
fi
needed "$build/vault-run-proxy" | grep -q '^libgnutls' ||
	{ echo "FAIL: control: vault-run-proxy does not link GnuTLS (is this the right build?)"; fail=1; }
needed "$build/vault-run-systemd" | grep -q '^libgio' ||
	{ echo "FAIL: control: vault-run-systemd does not link GIO"; fail=1; }
exit $fail
