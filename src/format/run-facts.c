/*
 * run-facts.c - the run's facts (run-facts.h) as a JSON object, for a
 * Chrome trace's "metadata" and for the facts file beside a tree profile.
 */
#include "format/run-facts.h"

#include <stdio.h>
#include <string.h>

static void field(kscope__jsonw *w, const char *key, const char *value)
{
    if (!value)
        return;
    kscope__jw_member_str(w, key, value);
}

void kscope__run_facts_json(kscope__jsonw *w, const kscope__run_facts *f)
{
    kscope__jw_open(w, '{');
    field(w, "command", f->command);
    field(w, "process", f->process);
    field(w, "host", f->host);
    kscope__jw_member_int(w, "pid", f->pid);
    field(w, "start_time", f->start_time);
    field(w, "kscope_version", f->version);
    kscope__jw_close(w, '}');
}

int kscope__facts_profile_of(const char *path, char *profile, size_t size)
{
    size_t n = strlen(path), e = strlen(KSCOPE__FACTS_EXT);
    const char *slash = strrchr(path, '/');
    size_t name = slash ? n - (size_t)(slash + 1 - path) : n;
    if (name <= e || strcmp(path + n - e, KSCOPE__FACTS_EXT) != 0)
        return 0;
    snprintf(profile, size, "%.*s", (int)(n - e), path);
    return 1;
}
