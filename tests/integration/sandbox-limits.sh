#!/usr/bin/env bash
# --memory, --pids, --cpu: where a cgroup mechanism exists (here: root) the
# limits are real — a fork loop gets EAGAIN, an allocator is OOM-killed and
# reported, a busy loop gets a share of a CPU — and the cgroup is gone after
# the run, also after a kill -9 of vault-run. Where none exists (@user,
# @unshare here) the run is refused with one clear line and exit 125, never
# run without the limit.
. "$(dirname "$0")/../lib/libtest.sh"
. "$(dirname "$0")/../lib/sandbox-lib.sh"
vr_require_sandbox
P="$T/project"
mkdir -p "$P"
cp "$VR_BIN/limits-probe" "$P/"
cd "$P"

plan=$("$VR" --project "$P" --dry-run --memory 64M --pids 30 --cpu 0.2 -- true | grep '^limits:')
vr_check "--dry-run shows the limits" grep -q 'memory 64M, pids 30, cpu 0.2' <<<"$plan"
echo "$plan"
# The same keys in the user config; the command line wins over them.
mkdir -p "$T/config/vault-run"
printf '[sandbox]\nmemory = 1G\npids = 99\ncpu = 150%%\n' >"$T/config/vault-run/config"
cplan=$(XDG_CONFIG_HOME="$T/config" "$VR" --project "$P" --dry-run --pids 40 -- true | grep '^limits:')
vr_check "config keys memory/pids/cpu, --pids over pids" grep -q 'memory 1G, pids 40, cpu 1.5' <<<"$cplan"

if [ -z "${VR_TEST_USER:-}${VR_TEST_UNSHARE:-}" ] && ! grep -q ' via ' <<<"$plan"; then
	vr_skip "no cgroup mechanism for the limits as root here: $plan"
fi

if ! grep -q ' via ' <<<"$plan"; then
	# No mechanism: refused before anything runs, with the fix.
	st=0
	"$VR" --project "$P" --memory 64M -- touch ran 2>"$T/err" || st=$?
	vr_check "a limit that cannot be enforced is refused with 125" test "$st" = 125
	vr_check "the refusal says so in one line" test "$(wc -l <"$T/err")" = 1
	vr_check "the refusal names the limit" grep -q 'cannot enforce the limits (memory 64M)' "$T/err"
	vr_check "the refusal says how to fix it" grep -q 'fix: .*drop the limit' "$T/err"
	# The systemd mechanism is asked first, by running vault-run-systemd
	# (run/cgroup-systemd-call.c); its reason is the refusal's first part.
	vr_check "the refusal gives vault-run-systemd's reason (no bus or no systemd)" \
		grep -Eq 'no systemd user session|systemd is not the init system|bus' "$T/err"
	vr_check_not "… not a missing helper" grep -q 'vault-run-systemd is neither' "$T/err"
	vr_check_not "COMMAND did not run" test -e ran
	cat "$T/err"
	st=0
	"$VR" --project "$P" --pids 30 --cpu 1 -- true 2>/dev/null || st=$?
	vr_check "--pids/--cpu are refused the same way" test "$st" = 125
	vr_done
fi

# The host directory of a line of /proc/PID/cgroup ("N:ctrl,...:/path" or "0::/path").
host_dir() {
	local ctrl path
	IFS=: read -r _ ctrl path <<<"$1"
	awk -v c="${ctrl%%,*}" '{
		split($0, h, " - "); split(h[2], r, " ")
		if (c == "" && r[1] == "cgroup2") { print $5; exit }
		if (c != "" && r[1] == "cgroup") { n = split(r[3], o, ","); for (i = 1; i <= n; i++) if (o[i] == c) { print $5; exit } }
	}' /proc/self/mountinfo | sed "s|\$|$path|"
}

# --pids: a bounded fork loop hits the limit; the host still forks.
out=$("$VR" --project "$P" --pids 30 -- ./limits-probe fork 200 2>"$T/pids.err") || true
vr_check "--pids 30: fork gets EAGAIN" grep -q EAGAIN <<<"$out"
forked=$(sed -n 's/^forked //p' <<<"$out")
vr_check "--pids 30: fewer than 30 children ($forked)" test "${forked:-99}" -lt 30
vr_check "--pids: vault-run says the limit was reached" grep -q 'reached --pids 30' "$T/pids.err"
vr_check "the host still forks" /bin/true

# --memory: the allocator is OOM-killed and vault-run says why.
st=0
"$VR" --project "$P" --memory 64M -- ./limits-probe alloc 512 >"$T/mem.out" 2>"$T/mem.err" || st=$?
vr_check "--memory 64M: the allocator dies of SIGKILL (137, got $st)" test "$st" = 137
vr_check_not "--memory 64M: it never got to 512 MiB" grep -q done "$T/mem.out"
vr_check "--memory: vault-run reports the OOM kill" grep -q 'ran out of memory (--memory 64M)' "$T/mem.err"
cat "$T/mem.err"

# --cpu: a 2 s busy loop gets about a fifth of a CPU (loosely: under 60 %).
out=$("$VR" --project "$P" --quiet --cpu 0.2 -- ./limits-probe spin 2)
pct=$(sed -n 's/^cpu-percent //p' <<<"$out")
vr_check "--cpu 0.2: a busy loop used ${pct:-?} % of a CPU (< 60)" test "${pct:-100}" -lt 60

# The cgroup while it runs (the values written) and after (gone).
"$VR" --project "$P" --quiet --memory 64M --pids 30 --cpu 0.2 --timeout 60 -- \
	sh -c 'cat /proc/self/cgroup >cg.txt; while [ ! -e stop ]; do sleep 0.05; done' &
sup=$!
for _ in $(seq 1 400); do [ -s cg.txt ] && break; sleep 0.05; done
mapfile -t lines < <(grep 'vault-run-' cg.txt)
vr_check "the sandbox is in vault-run cgroups" test "${#lines[@]}" -ge 1
dirs=()
for l in "${lines[@]}"; do dirs+=("$(host_dir "$l")"); done
limits=""
for d in "${dirs[@]}"; do limits+=" $(cat "$d"/memory.max "$d"/memory.limit_in_bytes "$d"/pids.max \
	"$d"/cpu.max "$d"/cpu.cfs_quota_us 2>/dev/null | tr '\n' ' ' || true)"; done
echo "cgroup files:$limits"
vr_check "memory limit written" grep -qw 67108864 <<<"$limits"
vr_check "pids limit written" grep -qw 30 <<<"$limits"
vr_check "cpu quota written" grep -qw 20000 <<<"$limits"
touch stop
wait "$sup" || true
gone() { for d in "${dirs[@]}"; do [ ! -e "$d" ] || return 1; done; }
vr_check "no cgroup is left after the run" gone

# kill -9 of vault-run: its helper still removes the cgroup.
rm -f cg.txt stop
"$VR" --project "$P" --quiet --pids 30 -- sh -c 'cat /proc/self/cgroup >cg.txt; exec sleep 300' &
sup=$!
for _ in $(seq 1 400); do [ -s cg.txt ] && break; sleep 0.05; done
dirs=()
while read -r l; do dirs+=("$(host_dir "$l")"); done < <(grep 'vault-run-' cg.txt)
vr_check "the killed run had a cgroup" test "${#dirs[@]}" -ge 1 -a -d "${dirs[0]:-/nonexistent}"
kill -9 "$sup"
wait "$sup" 2>/dev/null || true
for _ in $(seq 1 200); do gone && break; sleep 0.05; done
vr_check "no cgroup is left after kill -9 of vault-run" gone
vr_done
