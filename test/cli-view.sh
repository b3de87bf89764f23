#!/bin/bash
# cli-view.sh - `kscope view`: golden output for every option, on Proton's
# files (fixtures) and on kscope-shaped files, in every input format.
source "$(dirname "$0")/read-lib.sh"

P=proton
K=kscope
golden view-default "$KS" view $P/proton_run.hatchet
golden view-metrics "$KS" view -m time/us,count,util,avg_time/ns $P/rich_tree.hatchet
golden view-rates "$KS" view --metrics tflop32/s,gbyte/s,flop/s,time/% $P/rich_tree.hatchet
golden view-exclusive "$KS" view -m cpu_time/ms,cpu_wait,tokens,step_idx,cpu_time/% \
    $P/rich_tree.hatchet
golden view-depth "$KS" view -d 2 $P/rich_tree.hatchet
golden view-depth0 "$KS" view --depth 0 -m count $P/rich_tree.hatchet
golden view-threshold "$KS" view -m time/us -t 40 $P/rich_tree.hatchet
golden view-include "$KS" view -i 'inner|manual' $P/rich_tree.hatchet
golden view-exclude "$KS" view -m time/us,count -e 'matmul|manual' $P/rich_tree.hatchet
golden view-include-exclude "$KS" view -m time/us --include 'step' --exclude 'inner' \
    $P/rich_tree.hatchet
golden view-sort "$KS" view --sort -m time/us,count $P/rich_tree.hatchet
golden view-sort-threshold "$KS" view --print-sorted -t 0.04 $P/rich_tree.hatchet
# a per-node metric: every frame listed (its largest first), none dropped;
# the tree keeps -d, the list every depth
golden view-print-sorted-exclusive "$KS" view --print-sorted -m cpu_time/ms,count -d 2 $P/rich_tree.hatchet
golden view-list-proton "$KS" view -l $P/rich_tree.hatchet
golden view-list-kscope "$KS" view --list $K/run_a.hatchet
golden view-kscope "$KS" view -m time/us,calls,wall_time/ms,avg_wall_time/us,util,count \
    $K/run_a.hatchet
golden view-diff-profile "$KS" view -m time/us,count --diff-profile $K/run_a.hatchet \
    $K/run_b.hatchet
golden view-trace "$KS" view -m time/us,count $P/rich_trace.chrome_trace
golden view-trace-host "$KS" view -m calls,wall_time/us,time/us $K/trace_host.json
for f in full file_function_line function_line file_function; do
    golden view-format-$f "$KS" view -m time/us -f $f $K/frames.hatchet
done
# launch-metadata scopes and empty frames are left out, as proton-viewer does
golden view-pruned "$KS" view -m time/ns,count,calls $K/pruned.hatchet
golden view-pruned-exclude "$KS" view -m time/ns,calls -e kernel $K/pruned.hatchet
golden view-color "$KS" view --color=always -m time/us,util $P/rich_tree.hatchet
golden view-no-color "$KS" view --color never -m time/us $P/rich_tree.hatchet

# colour on a terminal only (script(1) gives the command a pseudo-terminal)
R=$DATA/$P/rich_tree.hatchet
esc=$'\033['
tty_out=$(env -u NO_COLOR TERM=xterm script -qc "'$KS' view -m time/us '$R'" /dev/null)
[[ $tty_out == *"$esc"* ]] && ok "colour on a terminal" || fail "no colour on a terminal"
tty_out=$(NO_COLOR=1 TERM=xterm script -qc "'$KS' view -m time/us '$R'" /dev/null)
[[ $tty_out != *"$esc"* ]] && ok "NO_COLOR honoured" || fail "colour despite NO_COLOR"
tty_out=$(env -u NO_COLOR TERM=xterm script -qc "'$KS' top '$R'" /dev/null)
[[ $tty_out == *"$esc"* ]] && ok "top: colour on a terminal" || fail "top: no colour on a terminal"
piped=$("$KS" view -m time/us "$R"; "$KS" top "$R")
[[ $piped != *"$esc"* ]] && ok "plain when piped" || fail "colour when piped"

# the same tree from .hatchet_msgpack prints the same
"$KS" convert "$DATA/$P/rich_tree.hatchet" "$WORK/rich.hatchet_msgpack" || fail "convert"
if diff <("$KS" view -m time/us,util,count "$DATA/$P/rich_tree.hatchet") \
    <("$KS" view -m time/us,util,count "$WORK/rich.hatchet_msgpack") >/dev/null; then
    ok "msgpack view equals JSON view"
else
    fail "msgpack view differs from JSON view"
fi

# a metric named as written in code: with its kind (inc, exc, pty; any
# case) and its unit as the file has it, the same column as its listed name
R=$DATA/$P/rich_tree.hatchet
if diff <("$KS" view -m "step_idx (pty),tokens (inc),cpu_wait (ns) (exc),TIME (NS)" "$R") \
    <("$KS" view -m "step_idx,tokens,cpu_wait (ns),time (ns)" "$R") >"$WORK/kind.diff"; then
    ok "-m takes names with (inc)/(exc)/(pty)"
else
    fail "-m with kinds differs: $(head -5 "$WORK/kind.diff")"
fi
bad view-kind-unknown "metric 'nope (pty)' is not in this file" "$KS" view -m "nope (pty)" $P/rich_tree.hatchet
# a mistyped metric gets the nearest spelling, in view's units, as a
# mistyped command does; none when nothing is close
bad view-hint-wall "Did you mean 'wall_time/ms'?" "$KS" view -m walltime $K/run_a.hatchet
bad view-hint-avg "Did you mean 'avg_wall_time/us'?" "$KS" view -m avgwalltime/us $K/run_a.hatchet
bad view-hint-raw "Did you mean 'tokens'?" "$KS" view -m tokns $P/rich_tree.hatchet
bad diff-hint "Did you mean 'wall_time/ms'?" "$KS" diff -m walltime $K/run_a.hatchet $K/run_b.hatchet
rc=0
err=$("$KS" view -m zzz "$R" 2>&1) || rc=$?
[ $rc = 2 ] && ! grep -q "Did you mean" <<<"$err" && ok "no hint when nothing is close" ||
    fail "hint for zzz: $err"

# help: `kscope help view` and `kscope view --help` agree and name every option
h1=$("$KS" help view) && h2=$("$KS" view --help) || fail "help exit status"
[ "$h1" = "$h2" ] && ok "help view == view --help" || fail "help texts differ"
for opt in --metrics --depth --threshold --include --exclude --format --sort --diff-profile \
    --list --color --help time/s avg_time cpu_time wall_time "flop8|16|32|64/s" gbyte/s util /%; do
    grep -qF -- "$opt" <<<"$h1" && ok "help mentions $opt" || fail "help lacks $opt"
done

# an unknown command suggests the nearest one
rc=0
err=$("$KS" veiw x 2>&1) || rc=$?
[ $rc = 2 ] && grep -q "Did you mean 'view'" <<<"$err" && ok "veiw -> view" ||
    fail "no suggestion: $err"

finish
