/*
 * run-facts.h - what a profile says about the run that made it: the
 * command, this process's own command line when it differs, the host, the
 * pid, when the session started and which kscope wrote it.
 *
 * One writer (run-facts.c) serves both places they go: a Chrome trace's
 * top-level "metadata" object, and the file written beside a tree profile
 * by the launchers ("<profile>.meta.json"), as a .hatchet has no room for
 * them that Proton's viewer accepts.
 */
#ifndef KSCOPE_RUN_FACTS_H
#define KSCOPE_RUN_FACTS_H

#include "format/jsonw.h"

/* The extension of the facts file: "<profile path>" KSCOPE__FACTS_EXT. */
#define KSCOPE__FACTS_EXT ".meta.json"

typedef struct kscope__run_facts {
    const char *command;    /* the run's command line, shell-quoted */
    const char *process;    /* this process's command line; NULL when it is the command */
    const char *host;       /* the machine's name */
    const char *start_time; /* the session's start, ISO 8601 UTC ("...T12:00:00.123Z") */
    const char *version;    /* kscope's version */
    long pid;
} kscope__run_facts;

/* Write the facts as one JSON object: {"command", "process"?, "host",
 * "pid", "start_time", "kscope_version"}. NULL strings are left out. */
void kscope__run_facts_json(kscope__jsonw *w, const kscope__run_facts *f);

/* Whether path names a facts file ("<profile>.meta.json"); 1 with the
 * profile's path (path less the extension) in profile, else 0. */
int kscope__facts_profile_of(const char *path, char *profile, size_t size);

#endif /* KSCOPE_RUN_FACTS_H */
