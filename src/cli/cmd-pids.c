/*
 * cmd-pids.c - `kscope pids --port N`: the processes serving a TCP port.
 */
#include "cli/cmd.h"
#include "kscope.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char cmd_pids_summary[] = "print the PIDs listening on a TCP port and their descendants";
const char cmd_pids_help[] =
    "usage: kscope pids --port N\n"
    "\n"
    "Print, one per line in ascending order, the PIDs of the processes that\n"
    "listen on TCP port N (IPv4 or IPv6) and of all their descendants: the\n"
    "processes of a server, to pass to `kscope monitor --pid`.\n"
    "\n"
    "options:\n"
    "  --port N   the TCP port, 1..65535\n"
    "\n"
    "exit status: 0 when some process was found, 1 when none listens on the\n"
    "port (or its owner cannot be seen), 2 for a usage error.\n";

int cmd_pids(int argc, char **argv)
{
    const char *port_text = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--port") == 0 && i + 1 < argc)
            port_text = argv[++i];
        else if (strncmp(argv[i], "--port=", 7) == 0)
            port_text = argv[i] + 7;
        else {
            fprintf(stderr, "kscope pids: unexpected argument '%s' (see kscope help pids)\n",
                    argv[i]);
            return KSCOPE_EXIT_USAGE;
        }
    }
    if (!port_text) {
        fprintf(stderr, "kscope pids: --port N is required\n");
        return KSCOPE_EXIT_USAGE;
    }
    long value;
    if (kscope_cli_whole(port_text, 1, 65535, &value) < 0) {
        fprintf(stderr, "kscope pids: bad port '%s' (expected 1..65535)\n", port_text);
        return KSCOPE_EXIT_USAGE;
    }
    int port = (int)value;
    int *pids = NULL;
    int n = 0;
    for (size_t cap = 256;; cap = (size_t)n) { /* again when there were more than cap */
        int *grown = realloc(pids, cap * sizeof *pids);
        if (!grown) {
            free(pids);
            fprintf(stderr, "kscope pids: out of memory\n");
            return KSCOPE_EXIT_FAIL;
        }
        pids = grown;
        n = kscope_pids_for_port(port, pids, cap);
        if (n <= (int)cap)
            break;
    }
    if (n <= 0) {
        if (n < 0)
            fprintf(stderr, "kscope pids: %s\n", kscope_last_error());
        else
            fprintf(stderr, "kscope pids: no process listens on TCP port %d\n", port);
        free(pids);
        return KSCOPE_EXIT_FAIL;
    }
    for (int i = 0; i < n; i++)
        printf("%d\n", pids[i]);
    free(pids);
    return KSCOPE_EXIT_OK;
}
