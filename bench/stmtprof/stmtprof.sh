#!/bin/bash
# stmtprof.sh PKG OUTDIR [test binary flags...]
#
# Where a package's tests spend their DuckDB time, statement by statement:
# the wall time of each statement's prepare (parse, bind, plan, optimize)
# and execution, summed per kind of statement (its first comment line, the
# header of its .sql file, or its first 80 characters), with call counts.
# The tests run at -test.parallel 1 and, as the tests set, with DuckDB on
# the calling thread, so wall time is about the thread's CPU time; under
# load it is inflated alike for every statement, so compare runs taken at
# the same load (or alternate them).
#
# How: go test links the package's test binary stripped; the host link is
# run again without stripping (same .text layout) so that uprobes can be
# put on DuckDB's C API (duckdb_extract_statements, its first 192 bytes of
# SQL read as 24 words; duckdb_prepare_extracted_statement;
# duckdb_pending_prepared; duckdb_execute_pending) and `perf record` counts
# them. Needs root (uprobes), perf and python3; run from the module root.
# The probes are removed at exit; others' probes are left alone.
#
# Example: TOP=30 bench/stmtprof/stmtprof.sh ./cmd/tracehouse /tmp/sp -test.run TestTriage
set -euo pipefail
[ $# -ge 2 ] || { sed -n '2,21p' "$0"; exit 2; }
pkg=$1
out=$(realpath -m "$2")
shift 2
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
rm -rf "$out/lk"
mkdir "$out/lk"
go test -c -o "$out/stripped.test" -ldflags="-s -w -v -tmpdir=$out/lk" "$pkg" 2>&1 | grep '^host link' > "$out/link.cmd"
B=$out/full.test
eval "$(sed 's/^host link: //; s#"-o" "[^"]*"#"-o" "'"$B"'"#; s#"-Wl,-s" ##g; s#"-s" ##g' "$out/link.cmd")"
T=/sys/kernel/tracing
[ -e $T/uprobe_events ] || mount -t tracefs nodev $T
grp=stmtprof$$
# a symbol's offset in the file: the text segment of a non-PIE Go
# executable is mapped at 0x400000 from offset 0
off() { printf '0x%x' $((0x$(nm "$B" | awk -v s="$1" '$3 == s {print $1}') - 0x400000)); }
words=""
for k in $(seq 0 23); do words="$words w$k=+$((k * 8))(%si):x64"; done
cleanup() {
	for e in $(grep "^[pr]:$grp/" $T/uprobe_events | sed -E 's/^[pr]:([^ ]+).*/\1/'); do
		echo "-:$e" >> $T/uprobe_events
	done
}
trap cleanup EXIT
echo "p:$grp/xs_in $B:$(off duckdb_extract_statements)$words" >> $T/uprobe_events
echo "r:$grp/xs_out $B:$(off duckdb_extract_statements)" >> $T/uprobe_events
for f in pe:duckdb_prepare_extracted_statement pp:duckdb_pending_prepared ex:duckdb_execute_pending; do
	a=$(off "${f#*:}")
	echo "p:$grp/${f%%:*}_in $B:$a" >> $T/uprobe_events
	echo "r:$grp/${f%%:*}_out $B:$a" >> $T/uprobe_events
done
dir=$(go list -f '{{.Dir}}' "$pkg")
(cd "$dir" && perf record -q -e "$grp:*" -o "$out/perf.data" -- "$B" -test.count=1 -test.parallel 1 "$@" > "$out/test.out" 2>&1) ||
	echo "stmtprof: the tests failed, see $out/test.out" >&2
perf script -i "$out/perf.data" -F tid,time,event,trace 2>/dev/null > "$out/events.txt"
python3 "$here/stmtprof.py" "$out/events.txt" "${TOP:-40}" | tee "$out/top.txt"
