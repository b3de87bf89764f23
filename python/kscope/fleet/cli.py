"""cli.py - the `kscope fleet` commands: export, summary, diff, sql, report.

Reached three ways, one code: `python -m kscope.fleet`, the `kscope`
command of the wheel (kscope/cli.py runs it in-process), and the C `kscope`
binary (src/cli/cmd-fleet.c runs this interpreter's module). Every error is
one line "kscope fleet: ..." with exit status 2 (bad input, bad option, a
query the engine refused, an engine not installed) or 1 (a failure writing
the output).
"""
import argparse
import contextlib
import csv
import json
import os
import sys

from .profiles import InputError, shown

ENGINES = ("duckdb", "spark")
EXTRA = {"duckdb": "fleet", "pyarrow": "fleet", "numpy": "fleet", "msgpack": "fleet",
         "pyspark": "spark"}

EPILOG = """exit status: 0; 2 for bad input or options (a file that is no profile,
a folder that is no dataset, a query the engine refused, an engine that is
not installed), with one line saying what; 1 when the output cannot be
written. Guide and schema: docs/fleet.md."""


class Parser(argparse.ArgumentParser):
    def error(self, message):
        raise InputError(f"{message} (see {self.prog} --help)")


def _engine_args(p, run=True):
    p.add_argument("--engine", choices=ENGINES, default="duckdb",
                   help="duckdb (embedded, default) or spark (pyspark: local mode, or the "
                        "cluster of spark-submit or --master)")
    p.add_argument("--master", default=None, metavar="URL",
                   help="Spark's master (default: spark-submit's, $KSCOPE_SPARK_MASTER, or local)")
    if run:
        p.add_argument("--run", default=None, metavar="NAME",
                       help="the run to analyse, when the dataset holds several")


def _analysis_args(p):
    p.add_argument("--metric", default=None, metavar="COLUMN",
                   help="the time column scopes are compared by (default time_ns_inc, the GPU "
                        "time under a scope; else wall_time_ns)")
    p.add_argument("-n", "--limit", type=int, default=None, metavar="N",
                   help="rows per list (default 20 in JSON, 10 printed)")


def parser(prog):
    top = Parser(prog=prog, description="Many ranks' profiles as one Parquet dataset, "
                 "analysed with DuckDB or Spark.", epilog=EPILOG,
                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = top.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    sub.required = True
    e = sub.add_parser("export", help="write profiles into a Parquet dataset",
                       description="Write profiles (.hatchet, .hatchet_msgpack, Chrome traces; kscope's "
                       "or Proton's; files or folders) into the dataset DIR: tables nodes, kernels "
                       "and runs, one partition per run and rank. The rank comes from the file name "
                       "(NAME.rank<R>.EXT, or NAME.pid<P>.EXT: the pid), the run from NAME.")
    e.add_argument("-o", "--output", required=True, metavar="DIR", help="the dataset (made if missing)")
    e.add_argument("--run", default=None, metavar="NAME", help="the run's name (default: from the file names)")
    e.add_argument("-j", "--jobs", type=int, default=None, metavar="N",
                   help="worker processes (default: one per core)")
    e.add_argument("profiles", nargs="*", metavar="PROFILE")
    s = sub.add_parser("summary", help="ranks, stragglers, imbalance, top kernels, communication")
    s.add_argument("dataset", metavar="DIR")
    s.add_argument("--json", action="store_true", help="print the summary as JSON")
    _engine_args(s)
    _analysis_args(s)
    d = sub.add_parser("diff", help="two runs, per scope and kernel, largest changes first")
    d.add_argument("a", metavar="DIR_A")
    d.add_argument("b", metavar="DIR_B")
    d.add_argument("--json", action="store_true")
    d.add_argument("--run-a", default=None, metavar="NAME")
    d.add_argument("--run-b", default=None, metavar="NAME")
    _engine_args(d, run=False)
    _analysis_args(d)
    q = sub.add_parser("sql", help="run a query over the views nodes, kernels and runs")
    q.add_argument("dataset", metavar="DIR")
    q.add_argument("query", metavar="QUERY")
    out = q.add_mutually_exclusive_group()
    out.add_argument("--json", action="store_true", help="rows as a JSON array of objects")
    out.add_argument("--csv", action="store_true", help="rows as CSV")
    _engine_args(q)
    r = sub.add_parser("report", help="the fleet page: heat map, stragglers, top kernels")
    r.add_argument("--html", required=True, metavar="OUT", help="the HTML file to write")
    r.add_argument("dataset", metavar="DIR")
    _engine_args(r)
    _analysis_args(r)
    return top


def _limit(a, default):
    if a.limit is None:
        return default
    if a.limit < 1:
        raise InputError(f"-n needs a number >= 1, not {a.limit}")
    return a.limit


def cmd_export(a, prog):
    from .export import export

    if a.jobs is not None and a.jobs < 1:
        raise InputError(f"-j needs a number >= 1, not {a.jobs}")
    r = export(a.profiles, a.output, run=a.run, workers=a.jobs,
               warn=lambda line: print(f"{prog}: warning: {line}", file=sys.stderr))
    kern = f", {r['kernels']} kernels" if r["kernels"] else ""
    print(f"{prog}: {r['files']} profiles of {r['ranks']} ranks (run {', '.join(r['runs'])}) into "
          f"{shown(a.output)}: {r['nodes']} nodes{kern}")
    print(f"summarise them with: kscope fleet summary {shown(a.output)}")
    return 0


def _engine(a):
    """The engine a's options ask for, over its datasets (checked first),
    closed when the `with` block it opens ends."""
    from . import dataset, engines

    for root in [getattr(a, "dataset", None), getattr(a, "a", None), getattr(a, "b", None)]:
        if root is not None:
            dataset.check(root)
    return contextlib.closing(engines.make(a.engine, master=a.master))


def _print_result(a, result, print_tables, rows):
    """An analysis's result as JSON with --json, else as tables of `rows`
    rows each (print_tables)."""
    if a.json:
        print(json.dumps(result, indent=2))
    else:
        print_tables(result, sys.stdout, rows)
    return 0


def cmd_summary(a, prog):
    from . import analyses

    limit, rows = _limit(a, analyses.LIMIT), _limit(a, 10)
    with _engine(a) as eng:
        s = analyses.summary(eng, a.dataset, run=a.run, metric=a.metric, limit=limit)
    return _print_result(a, s, analyses.print_summary, rows)


def cmd_diff(a, prog):
    from . import analyses

    limit, rows = _limit(a, analyses.LIMIT), _limit(a, 20)
    with _engine(a) as eng:
        d = analyses.diff(eng, a.a, a.b, a.run_a, a.run_b, metric=a.metric, limit=limit)
    return _print_result(a, d, analyses.print_diff, rows)


def cmd_sql(a, prog):
    from . import analyses

    with _engine(a) as eng:
        cols, rows = analyses.sql(eng, a.dataset, a.query, a.run)
    if a.json:
        print(json.dumps([dict(zip(cols, r)) for r in rows], indent=2, default=str))
    elif a.csv:
        w = csv.writer(sys.stdout, lineterminator="\n")
        w.writerow(cols)
        w.writerows(rows)
    else:
        analyses.table(cols, [["NULL" if v is None else v for v in r] for r in rows], sys.stdout)
        print(f"({len(rows)} row{'s' if len(rows) != 1 else ''})")
    return 0


def cmd_report(a, prog):
    from . import page

    limit = _limit(a, 20)
    with _engine(a) as eng:
        page.write(eng, a.dataset, a.html, run=a.run, metric=a.metric, limit=limit)
    print(f"{prog}: wrote {shown(a.html)}", file=sys.stderr)
    return 0


COMMANDS = {"export": cmd_export, "summary": cmd_summary, "diff": cmd_diff, "sql": cmd_sql,
            "report": cmd_report}


def main(argv=None, prog="kscope fleet"):
    argv = sys.argv[1:] if argv is None else argv
    from .engines import QueryError

    try:
        a = parser(prog).parse_args(argv)
        return COMMANDS[a.command](a, prog)
    except (InputError, QueryError) as e:
        print(f"{prog}: {e}", file=sys.stderr)
        return 2
    except ImportError as e:
        name = (e.name or "").split(".")[0]
        if name not in EXTRA:
            raise
        print(f"{prog}: the {name} package is not installed: pip install 'kscope[{EXTRA[name]}]'",
              file=sys.stderr)
        return 2
    except BrokenPipeError:  # the reader went away: it wanted no more
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except OSError as e:
        where = f"{shown(e.filename)}: " if e.filename else ""
        print(f"{prog}: {where}{e.strerror or e}", file=sys.stderr)
        return 1
