# cli-trace-gz.sh - traces of kscope run in bounded memory and compressed:
# --compress writes <name>.chrome_trace.gz, which the standard library's
# gzip and json read (slices nested, metadata present) and which view,
# convert, merge, top and report --html open; zlib missing: a plain trace
# and one warning line; a trace larger than KSCOPE_TRACE_BUFFER stays
# within it; bad options and bad gzip input are refused with one line.
source "${KSCOPE_SOURCE_DIR:?}/test/run-lib.sh" || exit 1
build run-scopes $KLINK
build run-many $KLINK
cd "$WORK"

# check_trace FILE SLICE [merged]: a Chrome trace (gzip or not) whose
# slices nest on each track, with the run's metadata (not a merged one's),
# holding SLICE; prints the slices' count.
check_trace() {
    python3 - "$1" "$2" "${3:-}" <<'PY'
import gzip, json, sys
path, want, merged = sys.argv[1], sys.argv[2], sys.argv[3]
opener = gzip.open if open(path, "rb").read(2) == b"\x1f\x8b" else open
doc = json.load(opener(path, "rt"))
ev = doc["traceEvents"]
assert merged or doc["metadata"]["command"], "no metadata"
assert any(e["ph"] == "M" and e["name"] == "thread_name" for e in ev), "no track names"
x = [e for e in ev if e["ph"] == "X" and e.get("cat") == "scope"]
assert any(e["name"] == want for e in x), f"no slice {want}"
tracks = {}
for e in x:
    tracks.setdefault((e["pid"], e["tid"]), []).append((e["ts"], -e["dur"], e["name"]))
for spans in tracks.values():
    spans.sort()
    open_ = []
    for ts, neg, name in spans:
        while open_ and open_[-1] <= ts:
            open_.pop()
        end = ts - neg
        assert not open_ or end <= open_[-1] + 1e-3, f"{name} ends after its parent"
        open_.append(end)
print(len(x))
PY
}

# --- --compress: one gzip file, opened by Python and by every reader
"$KS" run -n gz -d trace --compress -- ./run-scopes >/dev/null 2>err.txt || fail "run: $(cat err.txt)"
[ -f gz.chrome_trace.gz ] || fail "gz.chrome_trace.gz not written ($(ls))"
[ ! -e gz.chrome_trace ] || fail "an uncompressed trace was written too"
[ "$(head -c 2 gz.chrome_trace.gz | od -An -tx1 | tr -d ' ')" = 1f8b ] || fail "not gzip"
n=$(check_trace gz.chrome_trace.gz work) || fail "compressed trace: $n"
"$KS" view gz.chrome_trace.gz | grep -q work || fail "view of the gzip trace lacks work"
"$KS" top gz.chrome_trace.gz >/dev/null || fail "top of the gzip trace failed"
"$KS" convert gz.chrome_trace.gz conv.hatchet && has conv.hatchet work ||
    fail "convert of the gzip trace lost work"
cp gz.chrome_trace.gz gz2.chrome_trace.gz
"$KS" merge -o merged.chrome_trace gz.chrome_trace.gz gz2.chrome_trace.gz >/dev/null 2>&1 &&
    check_trace merged.chrome_trace work merged >/dev/null || fail "merge of gzip traces failed"
"$KS" report --html gz.html gz.chrome_trace.gz >/dev/null 2>&1 && grep -q work gz.html ||
    fail "report --html of the gzip trace failed"
ok "--compress writes a gzip trace every reader opens"

# --- a gzip file by content, whatever its name; corrupt gzip: one line
cp gz.chrome_trace.gz renamed.json
"$KS" view renamed.json | grep -q work || fail "a gzip trace named .json is not read"
head -c 200 gz.chrome_trace.gz >cut.chrome_trace.gz
"$KS" view cut.chrome_trace.gz >out.txt 2>err.txt
rc=$?
[ $rc -ne 0 ] || fail "a cut gzip file was read (exit 0)"
[ "$(wc -l <err.txt)" -eq 1 ] && grep -q "cut.chrome_trace.gz" err.txt ||
    fail "a cut gzip file's error is not one line naming it: $(cat err.txt)"
ok "gzip found by its bytes; a cut one refused in one line"

# --- zlib missing at write time: the trace is written plain, one warning
KSCOPE_LIBZ=/nonexistent/libz.so.1 "$KS" run -n nolib -d trace --compress -- ./run-scopes \
    >/dev/null 2>err.txt || fail "run without zlib failed: $(cat err.txt)"
[ -f nolib.chrome_trace ] || fail "no plain trace without zlib ($(ls nolib*))"
[ "$(grep -c 'zlib' err.txt)" -eq 1 ] || fail "no single zlib warning: $(cat err.txt)"
check_trace nolib.chrome_trace work >/dev/null || fail "the plain trace is not whole"
ok "without zlib: a plain trace and one warning"

# --- options refused before the program runs
"$KS" run --compress -- ./run-scopes >/dev/null 2>err.txt
[ $? -eq 2 ] && grep -q -- "--compress" err.txt || fail "--compress without -d trace: $(cat err.txt)"
KSCOPE_TRACE_BUFFER=lots "$KS" run -d trace -- ./run-scopes >/dev/null 2>err.txt
[ $? -eq 2 ] && grep -q "KSCOPE_TRACE_BUFFER" err.txt ||
    fail "a bad KSCOPE_TRACE_BUFFER was not refused: $(cat err.txt)"
ok "bad options refused"

# --- a trace larger than its buffer: the process holds the buffer, the
# file holds the run (events past what the disk keeps up with are counted)
n=400000
KSCOPE_TRACE_BUFFER=2M /usr/bin/time -f %M -o rss.txt "$KS" run -n big -d trace -- \
    ./run-many $n >/dev/null 2>err.txt || fail "big run failed: $(cat err.txt)"
got=$(check_trace big.chrome_trace outer) || fail "big trace: $got"
# (the run's summary says how many events were dropped, if any)
dropped=$(sed -n 's/.*; \([0-9]*\) events dropped (the disk did not keep up.*/\1/p' err.txt)
grep -q "GPU records dropped" err.txt && fail "a trace's dropped events called GPU records"
[ $((got * 2 + ${dropped:-0})) -ge $((n * 2)) ] ||
    fail "$got slices of $((n * 2)) and ${dropped:-0} events dropped do not add up"
if ! ldd "$KSCOPE_BINARY_DIR/libkscope.so" | grep -q libasan; then
    # 400k rounds hold 25 MB of events without a buffer
    [ "$(cat rss.txt)" -lt 20000 ] || fail "the run grew to $(cat rss.txt) kB with a 2M buffer"
fi
ok "a trace larger than its buffer ($got slices, ${dropped:-0} events dropped)"

finish
