#!/usr/bin/env bash
# quickstart.sh — the README's first command: installs what is missing (Debian
# packages), builds vault-run, turns examples/demo-project into a git
# repository with a pre-commit hook (a .git cannot be committed inside this
# repository), and runs the demo: a shell inside the sandbox lists the project
# and tries to read its .env. The README's second command (the test suite)
# copies only the demo's tracked files, never this .git.
#
# VR_WERROR=1 in the environment builds with warnings as errors (.ci/run
# does, so CI builds once: the README's build is CI's -Werror build).
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(cmake gcc pkg-config make libfuse3-dev fuse3 libglib2.0-dev libjansson-dev libcmocka-dev
          libseccomp-dev libgnutls28-dev glib-networking git)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if ((${#missing[@]})); then
  sudo=; [ "$(id -u)" = 0 ] || sudo=sudo
  echo "quickstart: installing ${missing[*]}"
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get update -qq
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

werror=()
[ "${VR_WERROR:-0}" = 1 ] && werror=(-DVR_WERROR=ON)
cmake -S . -B build "${werror[@]}" >/dev/null
cmake --build build -j"$(nproc)" >/dev/null
echo "quickstart: built build/vault-run"

demo=examples/demo-project
if [ ! -d "$demo/.git" ]; then
  git -C "$demo" init -q
  git -C "$demo" -c user.name=demo -c user.email=demo@example.invalid add -A .
  git -C "$demo" -c user.name=demo -c user.email=demo@example.invalid commit -qm "demo project"
  printf '#!/bin/sh\necho "pre-commit hook ran"\n' >"$demo/.git/hooks/pre-commit"
  chmod +x "$demo/.git/hooks/pre-commit"
  echo "quickstart: made $demo a git repository with a pre-commit hook"
fi

echo "quickstart: what the host sees in $demo:"
ls -A "$demo"
echo
echo "quickstart: running: build/vault-run --project $demo -- sh -c 'ls -la; cat .env'"
echo
status=0
build/vault-run --project "$demo" -- sh -c 'ls -la; cat .env' || status=$?
echo
# `cat .env` must fail inside (exit 1); anything else means the sandbox did not run.
if [ "$status" != 1 ]; then
  echo "quickstart: the demo did not run as expected (exit status $status)" >&2
  exit "$status"
fi
echo "quickstart: the agent saw the project without .env, id_rsa and config/credentials.json (exit status $status)."
echo "quickstart: why is a file hidden?  build/vault-run policy explain --project $demo .env id_rsa .git/hooks/pre-commit"
