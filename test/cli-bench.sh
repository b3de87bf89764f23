#!/usr/bin/env bash
# cli-bench.sh - `kscope bench`: help, bad options (exit 2, one line), a
# machine without a GPU (one line, exit 77), and, on the pretend GPU
# (test/progs/fake-gpu-*.c), the whole run: the floor sees one record
# per launch, every way of running the loop gets a row with numbers, and
# --sample changes the sampled way.
. "$KSCOPE_SOURCE_DIR/test/run-lib.sh"
cd "$WORK" || exit 1

"$KS" help | grep -q "^  bench " || fail "kscope help does not list bench"
"$KS" bench --help | grep -q "usage: kscope bench" || fail "bench --help"
for args in "-n 5" "-r 2" "--rounds x" "--sample bogus" "--frob" "-n" "--child bare" \
    "--child nope 100"; do
    # shellcheck disable=SC2086
    "$KS" bench $args >out.txt 2>err.txt
    rc=$?
    [ $rc -eq 2 ] && [ "$(wc -l <err.txt)" -eq 1 ] && [ ! -s out.txt ] ||
        fail "bench $args: rc $rc, $(cat err.txt)"
done
ok "usage"

if ! "$KS" version | grep -q cupti; then
    "$KS" bench >out.txt 2>err.txt
    rc=$?
    [ $rc -eq 77 ] && [ "$(wc -l <err.txt)" -eq 1 ] && grep -q "without a GPU backend" err.txt ||
        fail "no backend: rc $rc, $(cat err.txt)"
    skip "the launch loop (this build has no CUPTI backend)"
    finish
fi
if [ "$GPU_DRIVER" = 1 ]; then
    skip "no GPU (needs a machine without a GPU driver)"
else
    "$KS" bench >out.txt 2>err.txt
    rc=$?
    [ $rc -eq 77 ] && [ "$(wc -l <err.txt)" -eq 1 ] && grep -q "no CUDA driver" err.txt &&
        [ ! -s out.txt ] || fail "no GPU: rc $rc, $(cat err.txt)"
    ok "no GPU"
fi

# The pretend GPU: its driver found as libcuda.so.1, a file for its device node.
if [ ! -f "$FAKE/libcupti.so" ]; then
    skip "the launch loop (the pretend GPU is built with the CUDA headers only)"
    finish
fi
fake() {
    LD_LIBRARY_PATH=$FAKE KSCOPE_CUPTI_LIBRARY=$FAKE/libcupti.so \
        KSCOPE_GPU_DEVICE_GLOB=$FAKE/libcuda.so.1 "$KSCOPE_CLI" bench "$@"
}
out=$(fake --child floor 1000) || fail "floor child"
[ "$(echo "$out" | awk '{print $4}')" = 3000 ] || fail "the floor saw: $out (1000 + 2000 warm-up)"
echo "$out" | grep -q "device Pretend GPU" || fail "device name: $out"

fake -n 500 -r 3 --torch-rounds 0 >out.txt 2>err.txt || fail "bench: $(cat err.txt)"
grep -q "^kscope bench: Pretend GPU, 500 launches per run" out.txt || fail "header: $(head -2 out.txt)"
# (the ratio to the floor is "-" when the floor measured no dearer than
# bare: speeds are the benchmark's to judge, not the test's)
for way in "bare" "floor" "in-process" "kscope run" "kscope run, annotated" \
    "sampled (between windows)"; do
    grep -E "^$(printf '%s' "$way" | sed 's/[()]/\\&/g') +3 +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ +(-?[0-9.]+|-) " \
        out.txt >/dev/null || fail "row '$way': $(grep -F "$way" out.txt)"
done
# kscope's states interleaved in one process: 9 rounds (3 per round of the
# others) of 125 launches (500 / 4, at least 100) each
grep -q "^kscope in one process, one step in three captured: 9 rounds of 125 launches" out.txt ||
    fail "interleaved title: $(grep -F 'in one process' out.txt)"
grep -q "vs shut  vs quiet" out.txt || fail "interleaved columns: $(grep -F 'vs shut' out.txt)"
for way in "shut (no capture)" "quiet (activity records)" "open (every launch followed)"; do
    grep -E "^$(printf '%s' "$way" | sed 's/[()]/\\&/g') +9 +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ +(-?[0-9.]+|-) " \
        out.txt >/dev/null || fail "row '$way': $(grep -F "$way" out.txt)"
done
[ ! -s err.txt ] || fail "bench wrote to stderr: $(cat err.txt)"
fake -n 500 -r 3 --torch-rounds 0 --sample step:on=1,every=2 >out.txt 2>err.txt || fail "bench --sample"
grep -E "^sampled +3 " out.txt >/dev/null || fail "--sample row: $(grep sampled out.txt)"
ls "$WORK" | grep -q kscope-bench && fail "a temporary folder was left in the working folder"
ok "launch loop"

# The interleaved child: a line per round with its three states' times,
# then the usual line; its profile removed. (Which state is faster is the
# benchmark's to say: on a busy machine one block's stall outweighs it.)
out=$(fake -r 5 --child interleaved 200) || fail "interleaved child"
[ "$(echo "$out" | grep -c '^round [0-4] shut [0-9.]* quiet [0-9.]* open [0-9.]*$')" = 5 ] ||
    fail "interleaved rounds: $out"
echo "$out" | tail -1 | grep -q "^us [0-9.]* records 0 device Pretend GPU$" || fail "last line: $out"
ls | grep -q "kscope-bench-interleaved" && fail "the interleaved child left its profile"
ok "interleaved child"

finish
