/*
 * options.c - a session's options, parsed and checked in one place: what
 * kscope_start is given (kscope_session_opts, strings as Proton's and MAX's
 * APIs and kscope run pass them) becomes one typed kscope__session_config,
 * or one error naming the option. The mode string (periodic_flushing,
 * pcsampling) is read here alone, for sessions and for kscope run's checks;
 * each part's own syntax (device_scopes, sample, trace_buffer, backend) is
 * read by that part's parser, called from here.
 */
#define _GNU_SOURCE
#include "core/core.h"
#include "format/format.h"

#include <errno.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char periodic_word[] = "periodic_flushing";

/* "interval=N" (N cycles) into *interval, rounded to a power of two. */
static int parse_interval(const char *mode, const char *opt, uint32_t *interval)
{
    static const char key[] = "interval=";
    if (strncmp(opt, key, sizeof key - 1) != 0)
        return kscope__fail(KSCOPE_EINVAL,
                            "mode '%s': unknown option '%s' (pcsampling takes interval=CYCLES)",
                            mode, opt);
    const char *v = opt + sizeof key - 1;
    char *end;
    errno = 0;
    unsigned long long n = strtoull(v, &end, 10);
    if (errno || end == v || *end || *v == '-' || n < 32 || n > (1ull << 31))
        return kscope__fail(KSCOPE_EINVAL,
                            "mode '%s': interval '%s' is not a number of cycles from 32 to "
                            "2147483648",
                            mode, v);
    /* The hardware samples every 2^k cycles: the nearest power. */
    uint32_t k = 5;
    while (k < 31 && (1ull << (k + 1)) <= n)
        k++;
    if (k < 31 && n - (1ull << k) > (1ull << (k + 1)) - n)
        k++;
    *interval = (uint32_t)1 << k;
    return 0;
}

/* "periodic_flushing" or "periodic_flushing:format=<name>" (Proton's mode
 * string): *part set (NULL: the session's default), or an error. */
static int periodic_mode(const char *mode, int trace, const kscope__format **part)
{
    size_t w = sizeof periodic_word - 1;
    *part = NULL;
    if (strncmp(mode, periodic_word, w) != 0 || (mode[w] && mode[w] != ':'))
        return kscope__fail(KSCOPE_EINVAL,
                            "mode '%s' is not periodic_flushing[:format=hatchet|hatchet_msgpack|"
                            "chrome_trace]",
                            mode);
    const char *opt = mode[w] ? mode + w + 1 : "";
    if (!*opt)
        return 0;
    if (strncmp(opt, "format=", 7) != 0)
        return kscope__fail(KSCOPE_EINVAL, "mode '%s': unsupported option '%s' (only format=)",
                            mode, opt);
    const kscope__format *f = kscope__format_by_name(opt + 7);
    if (!f)
        return kscope__fail(KSCOPE_EFORMAT, "mode '%s': unsupported format '%s'", mode, opt + 7);
    if ((f->kind == KSCOPE__KIND_TRACE) != trace)
        return kscope__fail(KSCOPE_EFORMAT, "mode '%s': format '%s' needs data=%s", mode, f->name,
                            trace ? "tree" : "trace");
    *part = f;
    return 0;
}

/* The mode string. A session's (part != NULL) may name periodic parts'
 * format; kscope run's checks (part NULL) take the bare words only. */
static int parse_mode(const char *mode, int trace, int *periodic, uint32_t *interval,
                      const kscope__format **part)
{
    *periodic = 0;
    *interval = 0;
    if (part)
        *part = NULL;
    if (!mode || !*mode)
        return 0;
    if (part && strncmp(mode, periodic_word, sizeof periodic_word - 1) == 0) {
        *periodic = 1;
        return periodic_mode(mode, trace, part);
    }
    if (strcmp(mode, periodic_word) == 0) {
        *periodic = 1;
        return 0;
    }
    size_t len = strcspn(mode, ":");
    if ((len == 10 && strncmp(mode, "pcsampling", 10) == 0) ||
        (len == 11 && strncmp(mode, "pc_sampling", 11) == 0)) {
        *interval = KSCOPE__PCS_INTERVAL;
        return mode[len] ? parse_interval(mode, mode + len + 1, interval) : 0;
    }
    return kscope__fail(KSCOPE_EINVAL,
                        "mode '%s' is not periodic_flushing or pcsampling[:interval=CYCLES]", mode);
}

int kscope__mode_parse(const char *mode, int *periodic, uint32_t *interval)
{
    return parse_mode(mode, 0, periodic, interval, NULL);
}

/* data, context, backend, mode and name. */
static int check_basic(const kscope_session_opts *o, kscope__session_config *c)
{
    if (o->data && strcmp(o->data, "trace") == 0)
        c->trace = 1;
    else if (o->data && strcmp(o->data, "tree") != 0)
        return kscope__fail(KSCOPE_EDATA, "data '%s' is not tree or trace", o->data);
    if (o->context && strcmp(o->context, "python") == 0)
        c->python = 1;
    else if (o->context && strcmp(o->context, "shadow") != 0)
        return kscope__fail(KSCOPE_EINVAL, "context '%s' is not shadow or python", o->context);
    if (kscope__backend_check(o->backend) != 0)
        return KSCOPE_EBACKEND;
    int rc = parse_mode(o->mode, c->trace, &c->periodic, &c->pcs, &c->part);
    if (rc != 0)
        return rc;
    if (c->pcs && c->trace)
        return kscope__fail(KSCOPE_EINVAL,
                            "mode '%s' records PC samples into a tree: use data=tree", o->mode);
    if (o->name && !*o->name)
        return kscope__fail(KSCOPE_EINVAL, "session name is empty");
    if (o->name && strlen(o->name) > 900)
        return kscope__fail(KSCOPE_EINVAL, "session name is longer than 900 characters");
    return 0;
}

/* Fail early when the output's folder cannot be written. */
static int check_writable(const char *name)
{
    char buf[1024];
    snprintf(buf, sizeof buf, "%s", name);
    const char *dir = dirname(buf);
    if (access(dir, W_OK) != 0)
        return kscope__fail(errno == ENOENT ? KSCOPE_EIO : KSCOPE_EACCES,
                            "cannot write profile '%s': folder '%s': %s", name, dir,
                            strerror(errno));
    return 0;
}

int kscope__config_parse(const kscope_session_opts *o, kscope__session_config *c)
{
    memset(c, 0, sizeof *c);
    int rc;
    if ((rc = check_basic(o, c)) != 0 ||
        (rc = kscope__sampling_resolve(o->sample, &c->sample)) != 0)
        return rc;
    if (c->sample && c->pcs) /* PC sampling needs every launch's callback */
        return kscope__fail(KSCOPE_EINVAL,
                            "sample '%s': PC sampling and the sampled mode cannot be combined",
                            c->sample);
    c->dscope = o->device_scopes && strcmp(o->device_scopes, "off") != 0;
    if (c->dscope && (rc = kscope__devscope_parse(o->device_scopes, &c->dso)) != 0)
        return rc;
    if (c->dscope && c->sample) /* every launch's records must meet their kernel */
        return kscope__fail(KSCOPE_EINVAL,
                            "sample '%s': device scopes and the sampled mode cannot be combined",
                            c->sample);
    c->name = o->name ? o->name : "kscope";
    if ((rc = check_writable(c->name)) != 0)
        return rc;
    if (c->trace && (rc = kscope__trace_budget(o->trace_buffer, &c->trace_budget)) != 0)
        return rc;
    c->compress = c->trace && o->compress;
    return 0;
}
