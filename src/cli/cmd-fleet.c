/*
 * cmd-fleet.c - `kscope fleet`: many ranks' profiles as one Parquet
 * dataset, analysed with DuckDB (embedded) or Spark. The command is the
 * Python package's (kscope.fleet, which the wheel installs; its engine
 * comes with `pip install 'kscope[fleet]'`): this runs it with the same
 * arguments in the interpreter $KSCOPE_PYTHON (the wheel's `kscope` sets
 * it to its own) or else python3 on PATH. `kscope report --html OUT DIR`
 * on a dataset comes here too, for the fleet page.
 */
#include "cli/cmd.h"
#include "read/read.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const char cmd_fleet_summary[] = "many ranks' profiles as a Parquet dataset: summary, diff, SQL";
const char cmd_fleet_help[] =
    "usage: kscope fleet export -o DIR [--run NAME] [-j N] PROFILE|FOLDER...\n"
    "       kscope fleet summary DIR [--json] [--run NAME] [--metric COLUMN] [-n N]\n"
    "       kscope fleet diff DIR_A DIR_B [--json] [--run-a NAME] [--run-b NAME] [-n N]\n"
    "       kscope fleet sql DIR \"SELECT ...\" [--json | --csv] [--run NAME]\n"
    "       kscope fleet report --html OUT DIR     (also: kscope report --html OUT DIR)\n"
    "\n"
    "export writes profiles ({formats}; kscope's or\n"
    "Proton's) into a Parquet dataset: tables nodes (one row per tree node,\n"
    "every metric a column, and <metric>_inc for those that roll up), kernels\n"
    "(each GPU activity of a trace) and runs (the run's facts), one partition\n"
    "per run and rank, so adding a rank is adding files. Ranks come from the\n"
    "file names kscope run gives under torchrun, mpirun or SLURM\n"
    "(NAME.rank<R>.EXT; NAME.pid<P>.EXT: the pid), the run from NAME.\n"
    "\n"
    "summary: the ranks; stragglers (ranks whose time in a scope exceeds the\n"
    "ranks' median by a robust margin, worst first); the imbalance of each\n"
    "scope (max over mean, slowest and fastest rank); the top kernels across\n"
    "ranks with their spread; communication (NCCL/RCCL kernels) against\n"
    "computation per rank, with their overlap where traces tell it.\n"
    "diff: two runs, per scope and kernel (mean per rank), largest change\n"
    "first. sql: any query over the views nodes, kernels and runs. report: one\n"
    "HTML page with the rank x scope heat map (time, imbalance), the\n"
    "stragglers and the top kernels.\n"
    "\n"
    "options of summary, diff, sql and report:\n"
    "  --engine E    duckdb (embedded, the default) or spark (pyspark, Java 17+:\n"
    "                local mode, or a cluster's under spark-submit or --master)\n"
    "  --master URL  Spark's master (default: spark-submit's, $KSCOPE_SPARK_MASTER,\n"
    "                else local)\n"
    "  --metric COL  the time column scopes are compared by (default time_ns_inc,\n"
    "                the GPU time under a scope; else wall_time_ns)\n"
    "  -n N          rows per list\n"
    "  -h, --help    this text\n"
    "\n"
    "The command is the kscope Python package's, run in $KSCOPE_PYTHON or else\n"
    "python3; it needs `pip install 'kscope[fleet]'` (DuckDB, PyArrow, NumPy,\n"
    "msgpack), and `kscope[spark]` for --engine spark. Guide, schema and a\n"
    "spark-submit example: docs/fleet.md.\n"
    "\n"
    "Exit status: 0; 2 for bad input or options, a query the engine refused or\n"
    "a missing package (one line saying what); 1 when the output cannot be\n"
    "written.\n";

/* Runs in the interpreter: the fleet command, or one line saying how to
 * install it. argv: -c, then the program name for messages, then the
 * command's arguments. The current folder is taken off the import path, so
 * a folder named kscope there is not imported in place of the package. */
static const char bootstrap[] =
    "import sys\n"
    "if sys.path and sys.path[0] in ('', '.'):\n"
    "    del sys.path[0]\n"
    "prog = sys.argv[1]\n"
    "try:\n"
    "    from kscope.fleet.cli import main\n"
    "except ImportError as e:\n"
    "    sys.stderr.write('%s: the kscope Python package is not installed for %s (%s): '\n"
    "                     'pip install \"kscope[fleet]\"\\n' % (prog, sys.executable, e))\n"
    "    sys.exit(2)\n"
    "sys.exit(main(sys.argv[2:], prog=prog))\n";

int kscope_cli_fleet_exec(const char *prog, int argc, char **argv)
{
    const char *py = getenv("KSCOPE_PYTHON");
    if (!py || !*py)
        py = "python3";
    char **args = calloc((size_t)argc + 5, sizeof *args);
    if (!args) {
        fprintf(stderr, "%s: out of memory\n", prog);
        return KSCOPE_EXIT_FAIL;
    }
    args[0] = (char *)py;
    args[1] = "-c";
    args[2] = (char *)bootstrap;
    args[3] = (char *)prog;
    for (int i = 0; i < argc; i++)
        args[4 + i] = argv[i];
    fflush(stdout);
    fflush(stderr);
    execvp(py, args);
    int err = errno;
    free(args);
    char shown[512];
    fprintf(stderr,
            "%s: cannot run %s: %s (it needs Python 3 with `pip install 'kscope[fleet]'`; "
            "KSCOPE_PYTHON names the interpreter)\n",
            prog, kscope__escape(py, shown, sizeof shown), strerror(err));
    return KSCOPE_EXIT_USAGE;
}

int cmd_fleet(int argc, char **argv)
{
    return kscope_cli_fleet_exec("kscope fleet", argc - 1, argv + 1);
}
