#!/usr/bin/env bash
# No production function over 120 lines (docs/HACKING.md, "House rules"),
# counted from the first line of its signature to its closing brace.
# The one exception is policy/match.c's dowild, kept close to git's
# wildmatch so that the two can be compared line by line.
#
# Functions in the house style (.clang-format): the signature starts at
# column 0, the body opens with "{" alone at column 0 and closes with "}"
# at column 0; a function written otherwise is not seen, so keep the style.
#
# Run by ctest as unit/check-function-length; by hand:
#   tests/check-function-length.sh [SRCDIR]   (VR_MAX_LINES=80 to look further)
set -u
cd "${1:-${VR_SOURCE_DIR:-$(dirname "$0")/..}}" || exit 2
max=${VR_MAX_LINES:-120}
files=$(ls common/*.c policy/*.c audit/*.c fusefs/*.c sandbox/*.c net/*.c run/*.c undo/*.c cli/*.c)
# shellcheck disable=SC2086
out=$(awk -v max="$max" '
	FNR == 1 { sig = ""; start = 0 }
	/^[A-Za-z_].*\(/ && !/;[ \t]*$/ && !start { sig = $0; sigline = FNR }
	/^\{/ && sig != "" { start = sigline; name = sig; sig = ""; next }
	/^\}/ && start {
		n = FNR - start + 1
		if (n > max && name !~ /[ *]dowild\(/)
			printf "%s:%d: %d lines (at most %d): %s\n", FILENAME, start, n, max, name
		start = 0
	}' $files)
if [ -n "$out" ]; then
	echo "check-function-length: split these (one job per function):"
	echo "$out"
	exit 1
fi
echo "check-function-length: no production function over $max lines (dowild excepted)"
