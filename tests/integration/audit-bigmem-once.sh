#!/bin/bash
# `vault-run audit --summary` over a 1-million-event log runs in bounded
# memory: its peak RSS is within a few MiB of the same over 100,000 events
# (the events are streamed; only distinct files, rules, hosts and processes
# are kept), and the numbers are exact. The log is generated into a pipe, so
# the test writes nothing to disk.
. "$(dirname "$0")/../lib/libtest.sh"
[ -x /usr/bin/time ] || vr_skip "/usr/bin/time (GNU time) is not installed"
vr_require_cmd awk

# gen N: N records, one in ten a hidden lookup, over 1,000 files, 50 hidden
# paths, 20 processes.
gen() {
	awk -v n="$1" 'BEGIN { for (i = 0; i < n; i++)
		printf "{\"ts\":\"2020-12-01T10:%02d:%02d.%06dZ\",\"run\":\"r\",\"op\":\"%s\",\"path\":\"src/dir%d/file%d.c\",\"result\":\"%s\",\"pid\":%d,\"comm\":\"proc%d\",\"exe\":\"/usr/bin/proc%d\",\"bytes_read\":%d,\"bytes_written\":0}\n",
			int(i / 60000) % 60, int(i / 1000) % 60, i % 1000000, (i % 10 == 0) ? "lookup" : "close",
			i % 50, i % 1000, (i % 10 == 0) ? "hidden" : "ok", 1000 + i % 200, i % 20, i % 20, 1 + i % 4096 }'
}
peak() {  # peak N: runs the summary over N records; prints the peak RSS in KiB
	gen "$1" | /usr/bin/time -f '%M' -o "$T/rss.$1" "$VR" audit --summary --json - >"$T/sum.$1"
	cat "$T/rss.$1"
}
small=$(peak 100000)
big=$(peak 1000000)
echo "peak RSS: 100k events ${small} KiB, 1M events ${big} KiB"
vr_check "1M events: exact event count" grep -q '"events":1000000,"bad_lines":0' "$T/sum.1000000"
vr_check "1M events: exact denials and reads" grep -q '"files_read":900,.*"denied":100000,' "$T/sum.1000000"
vr_check "memory does not grow with the events (< +8 MiB for 10x)" [ "$big" -lt $((small + 8192)) ]
vr_done
