# cli-run-summary.sh - the exit summary of `kscope run` from a run's
# manifest: the top-kernels table and the share it covers, GPU time against
# wall time (matching the profile file), dropped records (a trace's dropped
# events), the view command, errors reported by processes, and a run that
# recorded nothing.
source "${KSCOPE_SOURCE_DIR:?}/test/run-lib.sh" || exit 1
cd "$WORK"
# Built under the name kscope and found on PATH, so the commands it prints
# read "kscope ..." (the last case takes it off PATH).
mkdir -p bin
export PATH=$WORK/bin:$PATH
cc -std=gnu11 -o bin/kscope "$PROGS/run-report.c" "$KSCOPE_SOURCE_DIR/src/cli/run-summary.c" \
    "$KSCOPE_SOURCE_DIR/src/cli/hints.c" \
    -I"$KSCOPE_SOURCE_DIR/src" -I"$KSCOPE_SOURCE_DIR/include" "$KSCOPE_BINARY_DIR/libkscope_toolkit.a" "$KSCOPE_BINARY_DIR/libkscope.a" \
    $(pkg-config --libs msgpack-c 2>/dev/null || pkg-config --libs msgpack) -lyajl -lz -lpthread -ldl \
    -lm -lstdc++ $(ldd "$KSCOPE_BINARY_DIR/libkscope.so" | grep libasan >/dev/null &&
        echo -fsanitize=address,undefined) \
    $(nm "$KSCOPE_BINARY_DIR/libkscope.a" | grep -q ' U __gcov_init' && echo --coverage) || exit 1
data=$KSCOPE_SOURCE_DIR/test/data/kscope/run_a.hatchet
cp "$data" a.hatchet

# a profile with 4 kernels, 2 shown; 3 ms of wall time; 5 dropped records
printf 'claim\t11\t%s/a\nprofile\t11\t3000000\t5\t%s/a.hatchet\n' "$PWD" "$PWD" >m1
kscope m1 2 >out.txt
grep -q "profile of pid 11: a.hatchet" out.txt || fail "profile line: $(cat out.txt)"
[ "$(grep -c '%  *[0-9.]* [mun]*s ' out.txt)" -eq 2 ] || fail "not 2 table rows: $(cat out.txt)"
grep -q "top 2 of 4 kernels and copies: 85.3% of all GPU time (all: kscope top -n 0 a.hatchet)" \
    out.txt || fail "top share line: $(cat out.txt)"
grep -q "more; -n 0" out.txt && fail "the kscope top hint was not replaced"
# GPU time in the summary is the file's total kernel time
total=$("$PY" -c '
import json, sys
root = json.load(open(sys.argv[1]))[0]
stack, t = [root], 0
while stack:
    n = stack.pop()
    if "device_id" in n["metrics"]:
        t += n["metrics"].get("time (ns)", 0)
    stack.extend(n.get("children", []))
print("%.3f ms" % (t / 1e6))' a.hatchet)
grep -q "GPU time $total in 3.000 ms wall" out.txt || fail "GPU time is not the file's $total: $(cat out.txt)"
grep -q "5 GPU records dropped" out.txt || fail "dropped records not shown"
grep -q "view it with: kscope view a.hatchet" out.txt || fail "view command"
grep -q "errors 0" out.txt || fail "no error expected"
ok "one profile"

# top 0: no table; errors are counted and shown; two profiles are listed
printf 'error\t12\tcannot write the profile: disk full\nprofile\t11\t1000\t0\t%s/a.hatchet\nprofile\t13\t1000\t0\t%s/a.hatchet\n' \
    "$PWD" "$PWD" >m2
kscope m2 0 >out.txt
grep -q "total" out.txt && fail "--top 0 printed a table"
grep -q "kscope run: pid 12: cannot write the profile: disk full" out.txt || fail "error line"
grep -q "errors 1" out.txt || fail "error count"
grep -q "2 profiles written (one per process)" out.txt || fail "profile count"
grep -q "dropped" out.txt && fail "dropped shown when none"
ok "errors and several profiles"

# a trace's dropped count is events past its budget, not GPU records
cp "$KSCOPE_SOURCE_DIR/test/data/kscope/trace_host.json" t.chrome_trace
printf 'profile\t11\t1000\t7\t%s/t.chrome_trace\n' "$PWD" >m5
kscope m5 10 >out.txt
grep -q "; 7 events dropped (the disk did not keep up; \$KSCOPE_TRACE_BUFFER holds more in memory)" \
    out.txt && ! grep -q "GPU records dropped" out.txt || fail "a trace's drops: $(cat out.txt)"
ok "a trace's dropped events"

# nothing recorded; a process that reserved a name and ended without
# writing; a profile that cannot be read; a missing manifest
printf 'bogus line\n' >m3
kscope m3 10 >out.txt
grep -q "no process recorded anything" out.txt || fail "nothing recorded: $(cat out.txt)"
printf 'claim\t11\t/x\nbogus line\n' >m3
kscope m3 10 >out.txt
grep -q "pid 11 ended before it wrote its profile (was it killed?)" out.txt &&
    ! grep -q "no process recorded anything" out.txt || fail "claimed, not written: $(cat out.txt)"
# killed before it said what it wrote: its profile is found in any format
# of the table, a gzip trace (--compress) included
gzip -c "$KSCOPE_SOURCE_DIR/test/data/kscope/trace_host.json" >g.chrome_trace.gz
printf 'claim\t11\t%s/g\n' "$PWD" >m6
kscope m6 10 >out.txt
grep -q "pid 11 ended before it said what it wrote (was it killed?); its profile is on disk:" out.txt &&
    grep -q "g.chrome_trace.gz" out.txt && ! grep -q "ended before it wrote its profile" out.txt ||
    fail "a gzip trace of a killed process: $(cat out.txt)"
echo 'not json' >bad.hatchet
printf 'profile\t11\t1000\t0\t%s/bad.hatchet\n' "$PWD" >m4
kscope m4 10 >out.txt
grep -q "cannot read back .*bad.hatchet" out.txt || fail "unreadable profile: $(cat out.txt)"
kscope no-such-manifest 10 >out.txt
grep -q "cannot read the run's results from no-such-manifest" out.txt && grep -q "errors 1" out.txt ||
    fail "missing manifest: $(cat out.txt)"
ok "edge cases"

# kscope not on PATH: the commands name the binary itself, and work as shown
PATH=${PATH#$WORK/bin:} "$WORK/bin/kscope" m1 2 >out.txt
grep -q "^view it with: $WORK/bin/kscope view a.hatchet$" out.txt ||
    fail "off PATH, the view command does not name the binary: $(cat out.txt)"
grep -q "(all: $WORK/bin/kscope top -n 0 a.hatchet)" out.txt || fail "off PATH: top hint"
ok "commands name the binary when PATH does not find it"
finish
