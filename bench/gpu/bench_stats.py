#!/usr/bin/env python3
"""bench_stats.py RESULTS TITLE UNIT BASE FLOOR[,FLOOR2] MODE... - the table of one
run_bench.sh section. RESULTS holds lines "<round> <mode> <value>" (value
"fail" for a run that failed); modes alternate within each round.

Per mode: median and quartiles, the ratio of medians to BASE (the bare
run), and what the mode adds over BASE as a multiple of what FLOOR adds
("vs floor", 1.00 = the floor's cost), with a bootstrap 95% interval:
rounds are drawn with replacement (a round's runs stay together, so a
slow stretch of the shared machine weighs on every mode alike) and the
ratio of medians recomputed, 4000 times. FLOOR "-" leaves those columns
out; a second floor after a comma (floor_cb: the floor plus the launch
callbacks any attribution needs) adds the same two columns against it. The machine's noise is as large as the effects measured: read the
intervals, not the medians alone."""
import random
import statistics
import sys


def quartiles(v):
    if len(v) < 2:
        return v[0], v[0]
    q = statistics.quantiles(v, n=4, method="inclusive")
    return q[0], q[2]


def added_ratio(rows, mode, base, floor):
    """(median(mode) - median(base)) / (median(floor) - median(base)); None
    when the floor adds nothing measurable."""
    b = statistics.median(rows[base])
    f = statistics.median(rows[floor]) - b
    if f <= 0:
        return None
    return (statistics.median(rows[mode]) - b) / f


def bootstrap(by_round, mode, base, floor, draws=4000, seed=1):
    rounds = [r for r in by_round if all(m in by_round[r] for m in (mode, base, floor))]
    if len(rounds) < 3:
        return None
    rng = random.Random(seed)
    out = []
    for _ in range(draws):
        pick = [rng.choice(rounds) for _ in rounds]
        rows = {m: [by_round[r][m] for r in pick] for m in (mode, base, floor)}
        v = added_ratio(rows, mode, base, floor)
        if v is not None:
            out.append(v)
    if len(out) < draws // 2:
        return None
    out.sort()
    return out[int(0.025 * len(out))], out[int(0.975 * len(out)) - 1]


def main():
    path, title, unit, base, floor_arg, *modes = sys.argv[1:]
    floors = [] if floor_arg == "-" else floor_arg.split(",")
    by_round, rows, failed = {}, {}, {}
    for line in open(path):
        parts = line.split()
        if len(parts) != 3:
            continue
        rnd, mode, value = parts
        if value == "fail":
            failed[mode] = failed.get(mode, 0) + 1
            continue
        by_round.setdefault(rnd, {})[mode] = float(value)
        rows.setdefault(mode, []).append(float(value))
    print(f"\n{title}")
    head = f"{'mode':<16}{'runs':>5}{'median':>10}{'q1':>9}{'q3':>9}{'vs bare':>9}"
    for floor in floors:
        head += f"{'vs ' + floor:>12}{'95% interval':>16}"
    print(head + f"   ({unit})")
    for m in modes:
        if m not in rows:
            print(f"{m:<16}{'(no run)':>15}" + (f"  {failed[m]} failed" if m in failed else ""))
            continue
        v = rows[m]
        q1, q3 = quartiles(v)
        line = f"{m:<16}{len(v):>5}{statistics.median(v):>10.3f}{q1:>9.3f}{q3:>9.3f}"
        line += (f"{statistics.median(v) / statistics.median(rows[base]):>9.3f}" if base in rows
                 else f"{'-':>9}")
        for floor in floors:
            line += against(by_round, rows, m, base, floor)
        if m in failed:
            line += f"  ({failed[m]} failed)"
        print(line)


def against(by_round, rows, m, base, floor):
    """The two columns of mode m against one floor."""
    if base not in rows or floor not in rows:
        return f"{'-':>12}{'-':>16}"
    # the rounds where all three ran, as the bootstrap draws them
    full = [r for r in by_round if all(k in by_round[r] for k in (m, base, floor))]
    paired = {k: [by_round[r][k] for r in full] for k in (m, base, floor)}
    r = added_ratio(paired, m, base, floor) if full else None
    ci = bootstrap(by_round, m, base, floor)
    out = f"{r:>12.2f}" if r is not None else f"{'-':>12}"
    return out + (f"{f'{ci[0]:.2f} - {ci[1]:.2f}':>16}" if ci else f"{'-':>16}")

if __name__ == "__main__":
    main()
