/*
 * cmd-convert.c - `kscope convert IN OUT`: write a profile again as a
 * tree in the format OUT names (format/format.h's table): a tree as a
 * tree, a trace as its tree.
 */
#include "cli/cmd.h"
#include "kscope.h"
#include "read/read.h"

#include <getopt.h>
#include <stdio.h>
#include <string.h>

const char cmd_convert_summary[] = "write a profile again in another format";
const char cmd_convert_help[] =
    "usage: kscope convert [options] IN OUT\n"
    "\n"
    "Read IN ({formats}; the format is\n"
    "detected from the content) and write its calling-context tree to OUT,\n"
    "as {tree_formats} by OUT's extension\n"
    "({tree_exts}) or --to. A trace becomes a tree:\n"
    "GPU activities land under their call stack with \"time (ns)\" and\n"
    "\"count\", host slices nest by time with \"calls\" and \"wall_time (ns)\".\n"
    "\n"
    "options:\n"
    "  -t, --to FORMAT  {tree_formats}, whatever OUT's name\n"
    "  -h, --help       show this help\n"
    "\n"
    "Exit status: 0 on success, 2 on bad options or an unreadable IN,\n"
    "1 when OUT cannot be written.\n";

int cmd_convert(int argc, char **argv)
{
    static const struct option longs[] = {
        {"to", required_argument, NULL, 't'},
        {NULL, 0, NULL, 0},
    };
    const kscope__format *to = NULL;
    char names[128];
    kscope__format_names(KSCOPE__KIND_TREE, " or ", names, sizeof names);
    int c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":t:", longs, NULL)) != -1) {
        if (c == 't') {
            to = kscope__format_by_name(optarg);
            if (!to || to->kind != KSCOPE__KIND_TREE) {
                fprintf(stderr, "kscope convert: --to: '%s' is not %s\n", optarg, names);
                return KSCOPE_EXIT_USAGE;
            }
        } else if (c == ':') {
            fprintf(stderr, "kscope convert: %s needs a value\n", argv[optind - 1]);
            return KSCOPE_EXIT_USAGE;
        } else {
            fprintf(stderr, "kscope convert: unknown option '%s' (see `kscope convert --help`)\n",
                    argv[optind - 1]);
            return KSCOPE_EXIT_USAGE;
        }
    }
    if (argc - optind != 2) {
        fprintf(stderr, "kscope convert: expected IN and OUT (see `kscope convert --help`)\n");
        return KSCOPE_EXIT_USAGE;
    }
    const char *in = argv[optind], *out = argv[optind + 1];
    if (!to)
        to = kscope__format_by_path(out);
    if (to && to->kind != KSCOPE__KIND_TREE) {
        fprintf(stderr,
                "kscope convert: %s: converting to %s (a trace) is not supported; OUT must be %s\n",
                KSCOPE__PATH(out), to->name, names);
        return KSCOPE_EXIT_USAGE;
    }
    if (!to) {
        char exts[256];
        fprintf(stderr,
                "kscope convert: %s: cannot tell the output format from the name; use a name "
                "ending in %s, or --to\n",
                KSCOPE__PATH(out),
                kscope__format_list(KSCOPE__KIND_TREE, KSCOPE__ITEM_EXTS, exts, sizeof exts));
        return KSCOPE_EXIT_USAGE;
    }
    char err[KSCOPE__READ_ERRLEN];
    kscope__ptree *t;
    if (kscope__read_profile(in, &t, err, sizeof err) < 0) {
        fprintf(stderr, "kscope convert: %s\n", err);
        return KSCOPE_EXIT_USAGE;
    }
    int rc = kscope__write_profile(out, t, to, err, sizeof err);
    kscope__ptree_free(t);
    if (rc < 0) {
        fprintf(stderr, "kscope convert: %s\n", err);
        return KSCOPE_EXIT_FAIL;
    }
    return KSCOPE_EXIT_OK;
}
