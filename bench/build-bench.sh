#!/usr/bin/env bash
# build-bench.sh [BUILD_DIR] — a C build through the view: a generated
# project of FILES (default 200) small C files, one header each and a
# Makefile, built with `make -j2` on the native directory, through the view
# (`vault-run mount`, default settings) and through bindfs; `make clean`
# (untimed) between runs, runs alternating, medians of RUNS (default 5).
# Not part of ctest. Env: FILES, RUNS, JOBS (default 2), KEEP=1.
set -euo pipefail
BUILD=${1:-$(cd "$(dirname "$0")/../build" 2>/dev/null && pwd || true)}
. "$(dirname "$0")/bench-lib.sh"
install_missing bindfs make gcc
FILES=${FILES:-200} JOBS=${JOBS:-2}

P="$W/tree"
mkdir -p "$P/src" "$P/include"
echo "generating $FILES C files…" >&2
for i in $(seq -w 1 "$FILES"); do
	printf '#ifndef M%s_H\n#define M%s_H\nint m%s_sum(const int *v, int n);\nint m%s_mix(int a, int b);\n#endif\n' \
		"$i" "$i" "$i" "$i" >"$P/include/m$i.h"
	{
		printf '#include <stdio.h>\n#include <string.h>\n#include "m%s.h"\n' "$i"
		printf 'struct s%s { int a[16]; char name[32]; };\n' "$i"
		printf 'int m%s_sum(const int *v, int n) { int s = 0; for (int k = 0; k < n; k++) s += v[k] * %d; return s; }\n' "$i" "$((10#$i))"
		printf 'int m%s_mix(int a, int b) { struct s%s x; memset(&x, 0, sizeof x);\n' "$i" "$i"
		printf '\tsnprintf(x.name, sizeof x.name, "%%d-%%d", a, b);\n\tfor (int k = 0; k < 16; k++) x.a[k] = a * k ^ b;\n'
		printf '\treturn m%s_sum(x.a, 16) + (int)strlen(x.name); }\n' "$i"
	} >"$P/src/m$i.c"
done
printf '#include <stdio.h>\nint main(void) { puts("bench"); return 0; }\n' >"$P/src/main.c"
cat >"$P/Makefile" <<'MK'
SRCS := $(wildcard src/*.c)
OBJS := $(SRCS:src/%.c=obj/%.o)
CFLAGS ?= -O1 -Wall -Iinclude
prog: $(OBJS)
	$(CC) -o $@ $(OBJS)
obj/%.o: src/%.c | obj
	$(CC) $(CFLAGS) -MMD -c -o $@ $<
obj:
	mkdir -p obj
clean:
	rm -rf obj prog
-include $(OBJS:.o=.d)
MK

mount_view "$P" "$W/view"
have_bindfs=0; mount_bindfs "$P" "$W/bindfs" && have_bindfs=1
places=(native view); ((have_bindfs)) && places+=(bindfs)
dir_of() { case $1 in native) echo "$P" ;; view) echo "$W/view" ;; bindfs) echo "$W/bindfs" ;; esac; }
build() { make -s -C "$1" -j"$JOBS"; }

for p in "${places[@]}"; do build "$(dir_of "$p")"; make -s -C "$(dir_of "$p")" clean; done  # warm-up
for i in $(seq 1 "$RUNS"); do
	for p in "${places[@]}"; do
		d=$(dir_of "$p")
		secs build "$d" >>"$W/t.$p"
		[ -x "$d/prog" ] || { echo "the build failed in $p" >&2; exit 1; }
		make -s -C "$d" clean
	done
done
n=$(median <"$W/t.native") v=$(median <"$W/t.view") b=-
[ -s "$W/t.bindfs" ] && b=$(median <"$W/t.bindfs" | awk '{ printf "%.3f", $1 }')
printf '%-22s %9s %9s %7s %9s %7s\n' work native view ratio bindfs ratio
printf '%-22s %9.3f %9.3f %7s %9s %7s  (seconds, / native)\n' "make -j$JOBS ($FILES files)" "$n" "$v" "$(ratio "$v" "$n")" \
	"$b" "$(ratio "$b" "$n")"
