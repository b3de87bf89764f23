/*
 * cmd-top.c - `kscope top`: the GPU kernels and copies of a profile,
 * aggregated by name across calling contexts, heaviest first (the table
 * `kscope run` prints at exit).
 */
#include "cli/cmd.h"
#include "kscope.h"
#include "read/read.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const char cmd_top_summary[] = "list the heaviest GPU kernels of a profile, by name";
const char cmd_top_help[] =
    "usage: kscope top [options] FILE\n"
    "\n"
    "Aggregate every GPU kernel and copy of FILE (a profile:\n"
    "{formats}) by name across all\n"
    "calling contexts and print them heaviest first: share of all GPU time\n"
    "(%), total time, calls (launches), average, min and max time per call,\n"
    "name. min/max come from the \"min_time (ns)\"/\"max_time (ns)\" metrics\n"
    "kscope records per kernel; for files without them (Proton's) they are\n"
    "the per-context averages.\n"
    "\n"
    "options:\n"
    "  -n, --limit N    show the N heaviest (default 20; 0 shows all)\n"
    "      --lines      for a profile recorded with PC sampling: the hottest\n"
    "                   source lines instead, across kernels and calling\n"
    "                   contexts: samples, share of all samples, the three\n"
    "                   main stall reasons, the line and its kernel\n"
    "      --color WHEN auto (default: colour on a terminal unless NO_COLOR is\n"
    "                   set), always, never\n"
    "      --full-names show kernel names whole (longer than 100 characters,\n"
    "                   they are folded: foo<...>(...))\n"
    "  -h, --help       show this help\n"
    "\n"
    "A profile without GPU kernels or copies (host scopes only) says so, and\n"
    "on stderr the `kscope view` command that shows its scopes.\n"
    "\n"
    "Exit status: 0 on success, 2 on bad options or an unreadable FILE.\n";

int cmd_top(int argc, char **argv)
{
    static const struct option longs[] = {
        {"limit", required_argument, NULL, 'n'},  {"color", required_argument, NULL, 'c'},
        {"colour", required_argument, NULL, 'c'}, {"full-names", no_argument, NULL, 'F'},
        {"lines", no_argument, NULL, 'L'},        {NULL, 0, NULL, 0},
    };
    long limit = 20;
    int color = kscope__color_auto(), full = 0, lines = 0, c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":n:", longs, NULL)) != -1) {
        switch (c) {
        case 'n':
            if (kscope_cli_whole(optarg, 0, 1000000000, &limit) < 0)
                return kscope_cli_error("top", KSCOPE_EXIT_USAGE,
                                        "-n: '%s' is not a count (a whole number >= 0)", optarg);
            break;
        case 'c':
            if (kscope_cli_color(optarg, &color) < 0)
                return kscope_cli_error("top", KSCOPE_EXIT_USAGE,
                                        "--color: '%s' is not auto, always or never", optarg);
            break;
        case 'F':
            full = KSCOPE__TOP_FULL_NAMES;
            break;
        case 'L':
            lines = 1;
            break;
        default:
            return kscope_cli_bad_option("top", c, argv);
        }
    }
    if (optind != argc - 1)
        return kscope_cli_usage("top", "%s",
                                optind >= argc ? "no FILE given" : "more than one FILE given");
    char err[KSCOPE__READ_ERRLEN];
    kscope__ptree *t;
    if (kscope__read_profile(argv[optind], &t, err, sizeof err) < 0)
        return kscope_cli_error("top", KSCOPE_EXIT_USAGE, "%s", err);
    int flags = (color ? KSCOPE__TOP_COLOR : 0) | full;
    int rc = lines ? kscope__lines_print(stdout, t, (int)limit, flags)
                   : kscope__top_print(stdout, t, (int)limit, flags);
    kscope__ptree_free(t);
    if (lines && rc == 0) {
        char name[512];
        fprintf(stderr,
                "kscope top: %s has no PC samples (record with `kscope run --pc-sampling`)\n",
                kscope__escape(argv[optind], name, sizeof name));
        return KSCOPE_EXIT_USAGE;
    }
    if (rc < 0)
        return kscope_cli_error("top", KSCOPE_EXIT_FAIL, "%s", kscope_strerror(rc));
    if (rc == 0) { /* host scopes only: the tree is where its time is */
        char cmd[8192];
        const char *file = argv[optind];
        fprintf(stderr, "kscope top: no GPU work in this profile; its scopes: %s\n",
                kscope_cli_command(cmd, sizeof cmd, "view", &file, 1));
    }
    return KSCOPE_EXIT_OK;
}
