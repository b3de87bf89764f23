/*
 * cmd-convert.c - `kscope convert IN OUT`: write a profile again in the
 * format OUT names (format/format.h's table): a tree as a tree, a trace as
 * a tree or as a trace.
 */
#include "cli/cmd.h"
#include "kscope.h"
#include "read/read.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char cmd_convert_summary[] = "write a profile again in another format";
const char cmd_convert_help[] =
    "usage: kscope convert [options] IN OUT\n"
    "\n"
    "Read IN ({formats}; the format is\n"
    "detected from the content) and write it to OUT in the format its\n"
    "extension ({exts}) or --to names.\n"
    "A calling-context tree is written as a tree: {tree_formats}.\n"
    "A trace becomes a tree: GPU activities land under their call stack with\n"
    "\"time (ns)\" and \"count\", host slices nest by time with \"calls\" and\n"
    "\"wall_time (ns)\"; or it stays a trace ({trace_formats}), each event as it\n"
    "was. A tree holds no timeline: it becomes no trace.\n"
    "\n"
    "options:\n"
    "  -t, --to FORMAT  {formats},\n"
    "                   whatever OUT's name\n"
    "  -h, --help       show this help\n"
    "\n"
    "OUT is written whole: until the new file is complete the old OUT stays as\n"
    "it was (a symbolic link is written through, a device or FIFO in place).\n"
    "On success `kscope convert: wrote OUT (SIZE)` goes to stderr.\n"
    "\n"
    "Exit status: 0 on success, 2 on bad options or an unreadable IN,\n"
    "1 when OUT cannot be written (one line naming it and why).\n";

/* A trace into a trace (a tree holds no timeline): IN's events written
 * again by OUT's format. */
static int convert_trace(const char *in, const char *out, const kscope__format *to,
                         const char *names)
{
    char err[KSCOPE__READ_ERRLEN];
    kscope__format_id id;
    if (kscope__sniff_file(in, &id, err, sizeof err) < 0)
        return kscope_cli_error("convert", KSCOPE_EXIT_USAGE, "%s", err);
    if (kscope__format_get(id)->kind != KSCOPE__KIND_TRACE)
        return kscope_cli_error("convert", KSCOPE_EXIT_USAGE,
                                "%s: converting to %s (a trace) is not supported; OUT must be %s",
                                KSCOPE__PATH(out), to->name, names);
    char *buf;
    size_t len;
    if (kscope__encode_trace(in, to, &buf, &len, err, sizeof err) < 0)
        return kscope_cli_error("convert", KSCOPE_EXIT_USAGE, "%s", err);
    int rc = kscope__write_file(out, buf, len, err, sizeof err);
    free(buf);
    if (rc < 0)
        return kscope_cli_error("convert", KSCOPE_EXIT_FAIL, "%s", err);
    return KSCOPE_EXIT_OK;
}

int cmd_convert(int argc, char **argv)
{
    static const struct option longs[] = {
        {"to", required_argument, NULL, 't'},
        {NULL, 0, NULL, 0},
    };
    const kscope__format *to = NULL;
    char names[128], all[256];
    kscope__format_names(KSCOPE__KIND_TREE, " or ", names, sizeof names);
    kscope__format_names(0, ", ", all, sizeof all);
    int c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":t:", longs, NULL)) != -1) {
        if (c != 't')
            return kscope_cli_bad_option("convert", c, argv);
        to = kscope__format_by_name(optarg);
        if (!to)
            return kscope_cli_error("convert", KSCOPE_EXIT_USAGE, "--to: '%s' is not %s", optarg,
                                    all);
    }
    if (argc - optind != 2)
        return kscope_cli_usage("convert", "expected IN and OUT");
    const char *in = argv[optind], *out = argv[optind + 1];
    if (!to)
        to = kscope__format_by_path(out);
    if (to && to->kind == KSCOPE__KIND_TRACE)
        return convert_trace(in, out, to, names);
    if (!to) {
        char exts[256];
        fprintf(stderr,
                "kscope convert: %s: cannot tell the output format from the name; use a name "
                "ending in %s, or --to\n",
                KSCOPE__PATH(out), kscope__format_list(0, KSCOPE__ITEM_EXTS, exts, sizeof exts));
        return KSCOPE_EXIT_USAGE;
    }
    char err[KSCOPE__READ_ERRLEN];
    kscope__ptree *t;
    if (kscope__read_profile(in, &t, err, sizeof err) < 0)
        return kscope_cli_error("convert", KSCOPE_EXIT_USAGE, "%s", err);
    int rc = kscope__write_profile(out, t, to, err, sizeof err);
    kscope__ptree_free(t);
    if (rc < 0)
        return kscope_cli_error("convert", KSCOPE_EXIT_FAIL, "%s", err);
    kscope_cli_wrote("convert", out);
    return KSCOPE_EXIT_OK;
}
