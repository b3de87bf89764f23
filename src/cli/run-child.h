/*
 * run-child.h - `kscope run`'s program: started, passed the signals sent to
 * kscope, waited for, and its end mirrored (run-child.c).
 */
#ifndef KSCOPE_CLI_RUN_CHILD_H
#define KSCOPE_CLI_RUN_CHILD_H

/* Start argv[0] (found in PATH) with argv; in the child, just before the
 * exec, setup(arg) prepares its environment. Every signal a supervisor may
 * send to kscope is passed on to the program, once, and a program that
 * stops stops kscope (run-child.c says how, with process groups and the
 * terminal). The program is killed if kscope dies first. Returns its wait
 * status (exited or killed), or -1 with a message printed when it could
 * not be started. */
int kscope_cli_run_child(char *const argv[], void (*setup)(void *), void *arg);

/* End kscope as the program ended: returns the exit code of a program that
 * exited; for a program killed by signal N, kscope ends itself by N (with
 * its default action, no core file of its own) and returns 128+N only if
 * it survives that. Flushes stdio first. */
int kscope_cli_end_like(int status);

#endif
