# cli-run-static.sh - `kscope run` on a program linked with the static
# libkscope.a: its copy of kscope hands its calls to the preloaded
# libkscope.so, so the run writes the same profile, and the program prints
# the same results and error messages, as when it links libkscope.so.
# Outside kscope run the static copy records the program's own session.
source "${KSCOPE_SOURCE_DIR:?}/test/run-lib.sh" || exit 1
build run-api $KLINK
mv "$WORK/run-api" "$WORK/api-shared"
build run-api $KSTATIC
mv "$WORK/run-api" "$WORK/api-static"
cd "$WORK"
nm api-static | grep -q ' T kscope_start$' || fail "api-static does not hold its own kscope"
objdump -p api-static | grep -q 'NEEDED.*libkscope' && fail "api-static links libkscope.so"

# shape FILE: every frame as "path calls int-metrics", sorted (no times).
shape() {
    "$PY" -c '
import json, sys
def walk(n, path):
    m = n["metrics"]
    ints = sorted((k, v) for k, v in m.items() if isinstance(v, int) and "time" not in k)
    print(path, ints)
    for c in n.get("children", []):
        walk(c, path + "/" + c["frame"]["name"])
walk(json.load(open(sys.argv[1]))[0], "ROOT")
' "$1" | sort
}

# --- the same profile and output as with the shared library
"$KS" run -n shared -- ./api-shared >out-shared.txt 2>err-shared.txt ||
    fail "shared: exit $?: $(cat err-shared.txt)"
"$KS" run -n static -- ./api-static >out-static.txt 2>err-static.txt
rc=$?
[ $rc -eq 0 ] || fail "static: exit $rc: $(cat err-static.txt)"
grep -q "no kscope calls" err-static.txt && fail "static: the run saw no kscope calls"
[ -f static.hatchet ] || fail "static: static.hatchet not written ($(ls))"
[ ! -e program-own-name.hatchet ] || fail "static: the program's own session wrote its file"
for n in outer work idle checkpoint span span2 span-mark; do
    has static.hatchet "$n" || fail "static: frame $n missing"
done
has static.hatchet paused && fail "static: a scope of a paused session was recorded"
[ "$(metric_of static.hatchet work calls)" = 3 ] || fail "static: work calls is not 3"
[ "$(metric_of static.hatchet work items)" = 3 ] || fail "static: items is not 0+1+2"
[ "$(parent_of static.hatchet work)" = outer ] || fail "static: work is not under outer"
diff <(shape shared.hatchet) <(shape static.hatchet) >shape.diff ||
    fail "static and shared profiles differ: $(cat shape.diff)"
diff out-shared.txt out-static.txt >out.diff || fail "program output differs: $(cat out.diff)"
grep -qx "mismatch KSCOPE_EMISMATCH: exit of scope 'not-open' does not match the innermost scope 'outer'" \
    out-static.txt || fail "static: the error message did not reach the program: $(cat out-static.txt)"
grep -qx "data 0 written, dropped 0" out-static.txt || fail "static: kscope_data: $(cat out-static.txt)"
grep -q "profile of pid .*: static.hatchet" err-static.txt || fail "static: summary: $(cat err-static.txt)"
ok "static library under kscope run"

# --- trace data: the program's slices in the run's trace
"$KS" run -n tr -d trace -- ./api-static trace >/dev/null 2>err.txt || fail "trace: $(cat err.txt)"
"$PY" -c '
import json, sys
ev = json.load(open("tr.chrome_trace"))["traceEvents"]
names = {e.get("name") for e in ev}
missing = {"outer", "work", "span", "checkpoint"} - names
assert not missing, missing
' || fail "trace: the static program's slices are missing"
ok "static library, trace data"

# --- outside kscope run the static copy records the program's own
# session, also with KSCOPE_RUN=1 set but no libkscope.so loaded
rm -f program-own-name.hatchet
./api-static >own.txt 2>/dev/null || fail "own session: exit $?"
[ -f program-own-name.hatchet ] || fail "own session: program-own-name.hatchet not written"
diff <(shape shared.hatchet) <(shape program-own-name.hatchet) >own.diff ||
    fail "own session differs from the run's profile: $(cat own.diff)"
rm -f program-own-name.hatchet
KSCOPE_RUN=1 ./api-static >/dev/null 2>&1
[ -f program-own-name.hatchet ] || fail "KSCOPE_RUN=1 without libkscope.so: own profile not written"
ok "static library on its own"

# --- a libkscope.so that lacks part of the API (another build, a stand-in):
# said once, and the program's own copy records
echo 'int kscope_start(const void *o) { (void)o; return 99; }' >partial.c
cc -shared -fPIC -o libkscope.so.0 partial.c
rm -f program-own-name.hatchet
KSCOPE_RUN=1 LD_PRELOAD=$WORK/libkscope.so.0 ./api-static >/dev/null 2>err.txt
grep -q "libkscope.so.0 lacks kscope_profiling: the program's own kscope records instead" err.txt ||
    fail "partial libkscope.so: not said: $(cat err.txt)"
[ -f program-own-name.hatchet ] || fail "partial libkscope.so: the program's own profile missing"
ok "a libkscope.so lacking the API is not deferred to"

finish
