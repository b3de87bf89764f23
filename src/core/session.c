/*
 * session.c - sessions: start, activate, deactivate, finalize, in-memory
 * data; the profiling switch; and the entry points the GPU backend uses to
 * deliver records and device info.
 */
#define _GNU_SOURCE
#include "core.h"
#include "format/format.h"
#include "util/util.h"

#include <errno.h>
#include <stddef.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

kscope__global kscope__g = {.level = KSCOPE_PROFILING_ON, .root = {.kind = KSCOPE__NODE_ROOT}};
kscope__session kscope__sessions[KSCOPE_MAX_SESSIONS];
_Atomic uint32_t kscope__trace_mask;
_Atomic uint64_t kscope__act_ticks[KSCOPE_MAX_SESSIONS];
_Atomic uint64_t kscope__deact_ticks[KSCOPE_MAX_SESSIONS];
pthread_mutex_t kscope__session_lock = PTHREAD_MUTEX_INITIALIZER;

static int launcher_slot = -1;
/* The id the next session gets. Ids count up from 0 and are never reused
 * (as Proton's): an id kept after its session ended cannot reach a later
 * session that happens to take the same slot. Guarded by session_lock. */
static int next_id;

const char *kscope_version(void)
{
    return KSCOPE_VERSION_STRING;
}

/* ------------------------------------------------------- profiling switch */

int kscope_parse_profiling(const char *text)
{
    static const struct {
        const char *word;
        int level;
    } words[] = {{"off", 0}, {"0", 0},    {"false", 0}, {"no", 0},       {"on", 1},
                 {"1", 1},   {"true", 1}, {"yes", 1},   {"detailed", 2}, {"2", 2}};
    if (!text)
        return KSCOPE_EINVAL;
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
        if (strcasecmp(text, words[i].word) == 0)
            return words[i].level;
    return kscope__fail(KSCOPE_EINVAL, "profiling level '%s' is not one of off, on, detailed",
                        text);
}

static void update_annotate(void)
{
    int any = 0;
    for (int s = 0; s < KSCOPE_MAX_SESSIONS; s++)
        any |= kscope__sessions[s].in_use;
    atomic_store(&kscope__g.annotate, any && atomic_load(&kscope__g.level) != KSCOPE_PROFILING_OFF);
}

static void level_from_env(void)
{
    const char *v = getenv("KSCOPE_PROFILING");
    const char *var = "KSCOPE_PROFILING";
    if (!v || !*v) {
        v = getenv("MODULAR_ENABLE_PROFILING");
        var = "MODULAR_ENABLE_PROFILING";
    }
    if (!v || !*v)
        return;
    int level = kscope_parse_profiling(v);
    if (level < 0) {
        kscope__warn_once("profiling-env", "%s=%s is not off, on or detailed; using on", var, v);
        return;
    }
    atomic_store(&kscope__g.level, level);
}

static pthread_once_t env_once = PTHREAD_ONCE_INIT;

int kscope_profiling(void)
{
    KSCOPE__DEFER(profiling);
    pthread_once(&env_once, level_from_env);
    return atomic_load(&kscope__g.level);
}

int kscope_set_profiling(int level)
{
    KSCOPE__DEFER(set_profiling, level);
    if (level < KSCOPE_PROFILING_OFF || level > KSCOPE_PROFILING_DETAILED)
        return kscope__fail(KSCOPE_EINVAL,
                            "profiling level %d is not 0 (off), 1 (on) or 2 (detailed)", level);
    pthread_once(&env_once, level_from_env);
    pthread_mutex_lock(&kscope__session_lock);
    atomic_store(&kscope__g.level, level);
    update_annotate();
    pthread_mutex_unlock(&kscope__session_lock);
    return 0;
}

/* ---------------------------------------------------------------- sessions */

kscope__session *kscope__session_find(int id)
{
    for (int i = 0; i < KSCOPE_MAX_SESSIONS; i++)
        if (kscope__sessions[i].in_use && kscope__sessions[i].id == id)
            return &kscope__sessions[i];
    return NULL;
}

/* session_find, failing with Proton's words when there is none. */
kscope__session *kscope__session_get(int id)
{
    kscope__session *s = kscope__session_find(id);
    if (!s)
        kscope__fail(KSCOPE_ENOSESSION,
                     "Session has not been initialized: %d (never started, or finalized)", id);
    return s;
}

static int interval_open(kscope__session *s, uint64_t now)
{
    pthread_mutex_lock(&s->lock);
    if (s->niv == s->capiv && KSCOPE__ROOM(s->iv, s->capiv, s->niv + 1, 8) != 0) {
        pthread_mutex_unlock(&s->lock);
        return kscope__fail(KSCOPE_ENOMEM, "out of memory activating session");
    }
    s->iv[s->niv++] = (kscope__interval){now, UINT64_MAX};
    pthread_mutex_unlock(&s->lock);
    return 0;
}

static void interval_close(kscope__session *s, uint64_t now)
{
    pthread_mutex_lock(&s->lock);
    if (s->niv && s->iv[s->niv - 1].end_ns == UINT64_MAX)
        s->iv[s->niv - 1].end_ns = now;
    pthread_mutex_unlock(&s->lock);
}

static void set_active(kscope__session *s, int on)
{
    uint32_t bit = 1u << s->slot;
    if (on) {
        atomic_store(&kscope__act_ticks[s->slot], kscope__ticks());
        atomic_fetch_or(&kscope__g.active_mask, bit);
    } else {
        atomic_fetch_and(&kscope__g.active_mask, ~bit);
        atomic_store(&kscope__deact_ticks[s->slot], kscope__ticks());
    }
    s->active = on;
}

static int start_locked(const kscope_session_opts *o)
{
    kscope__session_config c;
    int rc = kscope__config_parse(o, &c);
    if (rc != 0)
        return rc;
    int slot = -1;
    for (int i = 0; i < KSCOPE_MAX_SESSIONS && slot < 0; i++)
        if (!kscope__sessions[i].in_use)
            slot = i;
    if (slot < 0)
        return kscope__fail(KSCOPE_ETOOMANY, "%d sessions are already started; finalize one first",
                            KSCOPE_MAX_SESSIONS);
    kscope__session *s = &kscope__sessions[slot];
    if (kscope__reset_slot(slot) != 0)
        return kscope__fail(KSCOPE_ENOMEM, "out of memory starting a session");
    if (!s->gen)
        pthread_mutex_init(&s->lock, NULL);
    pthread_mutex_lock(&s->lock);
    __atomic_fetch_add(&s->gen, 1, __ATOMIC_RELEASE); /* threads read it as they record */
    s->slot = slot;
    s->id = next_id++;
    snprintf(s->name, sizeof s->name, "%s", c.name);
    s->trace = c.trace;
    s->python_ctx = c.python;
    s->periodic = c.periodic;
    s->compress = c.compress;
    s->part_format = c.part;
    s->pcs = c.pcs;
    s->pcs_ended = 0;
    s->phase = 0;
    s->phase_owed = 0;
    s->niv = s->nmtypes = s->ngev = 0;
    s->dropped = s->dropped_samples = 0;
    s->dscope = c.dscope;
    s->dso = c.dso; /* zero when off */
    s->dscope_ended = 0;
    s->dscope_lost = 0;
    s->start_ns = kscope_now_ns();
    pthread_mutex_unlock(&s->lock);
    if ((rc = interval_open(s, s->start_ns)) != 0 ||
        (rc = kscope__spill_start(s, c.trace_budget)) != 0)
        return rc;
    if (c.trace) /* its storage is ready (spill.c's writer thread reads it then) */
        atomic_fetch_or(&kscope__trace_mask, 1u << slot);
    else
        atomic_fetch_and(&kscope__trace_mask, ~(1u << slot));
    s->in_use = 1;
    kscope__gpu_attach(s, o->backend);
    if ((rc = kscope__sampling_attach(s, c.sample)) != 0) {
        kscope__gpu_detach(s);
        s->in_use = 0;
        return rc;
    }
    set_active(s, 1);
    update_annotate();
    return s->id;
}

int kscope_start(const kscope_session_opts *opts)
{
    KSCOPE__DEFER(start, opts);
    kscope_session_opts defaults = {0};
    kscope_profiling();
    kscope__clock_init();
    kscope__clock_refresh();
    pthread_mutex_lock(&kscope__session_lock);
    int rc = launcher_slot >= 0 ? kscope__sessions[launcher_slot].id
                                : start_locked(opts ? opts : &defaults);
    pthread_mutex_unlock(&kscope__session_lock);
    return rc;
}

static int write_phase(kscope__session *s);

/* Work put off while a graph capture was open (a sync or a flush would
 * have ended it), done by the first session call after it closed: the
 * flush, then the periodic parts that waited for it. */
static int catch_up(void)
{
    if (kscope__capturing(0))
        return 0;
    kscope__gpu_flush_owed();
    int rc = 0;
    for (int i = 0; i < KSCOPE_MAX_SESSIONS; i++) {
        kscope__session *s = &kscope__sessions[i];
        if (s->in_use && s->phase_owed) {
            s->phase_owed = 0;
            int r = write_phase(s);
            rc = rc ? rc : r;
        }
    }
    return rc;
}

/* Apply fn to one session or, with KSCOPE_ALL, to every started one. */
static int for_sessions(int id, int (*fn)(kscope__session *, const void *), const void *arg)
{
    pthread_mutex_lock(&kscope__session_lock);
    int rc = catch_up();
    if (id == KSCOPE_ALL) {
        for (int i = 0; i < KSCOPE_MAX_SESSIONS; i++)
            if (kscope__sessions[i].in_use) {
                int r = fn(&kscope__sessions[i], arg);
                rc = rc ? rc : r;
            }
    } else {
        kscope__session *s = kscope__session_get(id);
        rc = s ? fn(s, arg) : KSCOPE_ENOSESSION;
    }
    pthread_mutex_unlock(&kscope__session_lock);
    return rc;
}

static int activate_one(kscope__session *s, const void *unused)
{
    (void)unused;
    if (s->active)
        return 0;
    int rc = interval_open(s, kscope_now_ns());
    if (rc == 0)
        set_active(s, 1);
    return rc;
}

int kscope_activate(int session)
{
    KSCOPE__DEFER(activate, session);
    kscope__clock_refresh();
    return for_sessions(session, activate_one, NULL);
}

static int deactivate_one(kscope__session *s, const void *flushing)
{
    if (s->active) {
        set_active(s, 0);
        interval_close(s, kscope_now_ns());
    }
    int put_off = kscope__gpu_flush(s);
    if (*(const int *)flushing && s->periodic) {
        if (put_off) { /* written once the capture closed (catch_up) */
            s->phase_owed = 1;
            return 0;
        }
        return write_phase(s);
    }
    return 0;
}

int kscope_deactivate(int session, int flushing)
{
    KSCOPE__DEFER(deactivate, session, flushing);
    kscope__clock_refresh(); /* what is read while paused converts alike */
    return for_sessions(session, deactivate_one, &flushing);
}

/* ------------------------------------------------------------------ output */

/* A session's compressed trace format, or the plain one, said once (on
 * stderr, or under kscope run in its summary), where zlib is missing. */
static const kscope__format *compressed_trace(const kscope__session *s)
{
    if (kscope__gzip_available())
        return kscope__format_get(KSCOPE__FORMAT_CHROME_TRACE_GZ);
    char msg[1200];
    snprintf(msg, sizeof msg,
             "libz.so.1 (zlib) could not be loaded: the trace of '%s' is written uncompressed",
             s->name);
    static _Atomic int said;
    if (!atomic_exchange(&said, 1))
        kscope__report_note("no-zlib", msg);
    return kscope__format_default(KSCOPE__KIND_TRACE);
}

/* The format to write: the one asked for, or the default for what the
 * session records; it must hold what the session records. */
int kscope__session_format(kscope__session *s, const char *name, const kscope__format **out)
{
    kscope__format_kind kind = s->trace ? KSCOPE__KIND_TRACE : KSCOPE__KIND_TREE;
    const kscope__format *f = name && *name    ? kscope__format_by_name(name)
                              : s->part_format ? s->part_format
                              : s->compress    ? compressed_trace(s)
                                               : kscope__format_default(kind);
    if (!f) {
        char names[128];
        return kscope__fail(KSCOPE_EFORMAT, "format '%s' is not %s", name,
                            kscope__format_names(0, ", ", names, sizeof names));
    }
    if (f->kind != kind)
        return kscope__fail(KSCOPE_EFORMAT, "session '%s' records a %s; format '%s' needs data=%s",
                            s->name, s->trace ? "trace" : "tree", f->name,
                            f->kind == KSCOPE__KIND_TRACE ? "trace" : "tree");
    *out = f;
    return 0;
}

/* The message for a writer's failure rc (a sink's own failures set theirs). */
static int write_failed(kscope__session *s, const kscope__format *f, int rc)
{
    if (rc == KSCOPE_ENOMEM)
        return kscope__fail(rc, "out of memory writing the %s of '%s'", s->trace ? "trace" : "tree",
                            s->name);
    if (rc == KSCOPE_ENOTSUP)
        return kscope__fail(rc,
                            "format '%s' needs zlib: libz.so.1 could not be loaded (install "
                            "zlib, or write the trace uncompressed)",
                            f->name);
    return rc;
}

int kscope__session_write(kscope__session *s, const kscope__format *f, const kscope__phase *ph,
                          const kscope__sink *out)
{
    uint64_t now = kscope__ticks();
    int rc;
    if (f->write_trace) {
        kscope__trace_args a = {s->slot, now, ph};
        rc = f->write_trace(kscope__trace_source, &a, out);
    } else if (ph) {
        rc = f->write_tree(ph->tree, out);
    } else {
        kscope__ptree *t = kscope__build_tree(s->slot, now, 0);
        if (!t)
            return kscope__fail(KSCOPE_ENOMEM, "out of memory building the tree of '%s'", s->name);
        rc = f->write_tree(t, out);
        kscope__ptree_free(t);
    }
    return rc ? write_failed(s, f, rc) : 0;
}

int kscope__session_serialize(kscope__session *s, const kscope__format *f, const kscope__phase *ph,
                              char **out, size_t *len)
{
    kscope__membuf m = {0};
    kscope__sink sink = {kscope__membuf_write, &m};
    int rc = kscope__session_write(s, f, ph, &sink);
    if (rc == 0 && !m.buf)
        rc = kscope__membuf_write(&m, "", 0) ? kscope__fail(KSCOPE_ENOMEM, "out of memory") : 0;
    if (rc != 0) {
        free(m.buf);
        return rc;
    }
    *out = m.buf;
    *len = m.len;
    return 0;
}

int kscope__session_output(kscope__session *s, const kscope__format *f, const kscope__phase *ph,
                           const char *path)
{
    kscope__outfile *o;
    int rc = kscope__output_open(path, &o);
    if (rc != 0)
        return rc;
    kscope__sink sink = {kscope__output_write, o};
    rc = kscope__session_write(s, f, ph, &sink);
    int end = kscope__output_close(o, rc == 0);
    return rc ? rc : end;
}

/* "<name>.<ext>", or "<name>.part_<N>.<ext>" for phase N of a session in
 * periodic flushing mode or past its first phase (Proton's names).
 * Returns the length snprintf reports. */
int kscope__session_path(kscope__session *s, const kscope__format *format, int phase, char *buf,
                         size_t size)
{
    char ext[32];
    kscope__format_ext(format, ext, sizeof ext);
    if (s->periodic || s->phase > 0)
        return snprintf(buf, size, "%s.part_%d%s", s->name, phase, ext);
    return snprintf(buf, size, "%s%s", s->name, ext);
}

int kscope_output_path(int session, const char *format, char *buf, size_t size)
{
    KSCOPE__DEFER(output_path, session, format, buf, size);
    pthread_mutex_lock(&kscope__session_lock);
    kscope__session *s = kscope__session_get(session);
    const kscope__format *f = NULL;
    int rc = s ? kscope__session_format(s, format, &f) : KSCOPE_ENOSESSION;
    if (rc == 0) {
        rc = kscope__session_path(s, f, s->phase, buf, size);
        if (buf == NULL || (size_t)rc >= size)
            rc = size == 0 ? rc : kscope__fail(KSCOPE_EINVAL, "path buffer too small");
    }
    pthread_mutex_unlock(&kscope__session_lock);
    return rc;
}

/* Periodic flushing: complete the current phase, written to its part. */
static int write_phase(kscope__session *s)
{
    int rc = kscope__phase_advance(s);
    return rc < 0 ? rc : 0;
}

static void release(kscope__session *s)
{
    kscope__phase_free(s);
    kscope__sampling_detach(s);
    free(s->command);
    s->command = NULL;
    kscope__gpu_detach(s);
    kscope__spill_end(s);
    s->in_use = 0;
    atomic_fetch_and(&kscope__trace_mask, ~(1u << s->slot));
    update_annotate();
}

static int finalize_one(kscope__session *s, const void *requested)
{
    const kscope__format *format = NULL;
    char path[1100];
    int rc = kscope__session_format(s, requested, &format);
    if (rc)
        return rc;
    int was_active = s->active;
    if (was_active) {
        set_active(s, 0);
        interval_close(s, kscope_now_ns());
    }
    if (kscope__gpu_flush(s))
        kscope__warn_once("capture-finalize",
                          "session '%s' was finalized while a graph capture was open: "
                          "records of GPU work still running then are left out",
                          s->name);
    kscope__gpu_pcs_end(s);
    kscope__gpu_dscope_end(s);
    s->phase_owed = 0; /* its records are in this, the last part */
    kscope__session_path(s, format, s->phase, path, sizeof path);
    if ((rc = kscope__phase_write_kept(s, format)) != 0 ||
        (rc = kscope__session_output(s, format, NULL, path)) != 0) {
        /* Keep the session as it was: the caller may retry elsewhere. */
        if (was_active && interval_open(s, kscope_now_ns()) == 0)
            set_active(s, 1);
        return rc;
    }
    int64_t dropped = __atomic_load_n(&s->dropped, __ATOMIC_RELAXED);
    if (dropped > 0 && !getenv("KSCOPE_QUIET") && s->trace)
        fprintf(stderr,
                "kscope: %s: %lld events were dropped: the disk did not keep up with the trace "
                "(KSCOPE_TRACE_BUFFER holds more in memory)%s%s\n",
                path, (long long)dropped, s->spill.err ? "; spilling failed: " : "",
                s->spill.err ? strerror(s->spill.err) : "");
    else if (dropped > 0 && !getenv("KSCOPE_QUIET"))
        fprintf(stderr, "kscope: %s: %lld GPU records were dropped (see dropped_records)\n", path,
                (long long)dropped);
    int64_t lost = __atomic_load_n(&s->dropped_samples, __ATOMIC_RELAXED);
    if (lost > 0 && !getenv("KSCOPE_QUIET"))
        fprintf(stderr, "kscope: %s: %lld PC samples were dropped (see dropped_samples)\n", path,
                (long long)lost);
    int64_t dlost = __atomic_load_n(&s->dscope_lost, __ATOMIC_RELAXED);
    if (dlost > 0 && !getenv("KSCOPE_QUIET"))
        fprintf(stderr,
                "kscope: %s: %lld device-scope records were lost (see device_scopes_lost; a "
                "larger buffer= keeps them)\n",
                path, (long long)dlost);
    if (s->slot == launcher_slot)
        launcher_slot = -1;
    release(s);
    return 0;
}

int kscope_finalize(int session, const char *format)
{
    KSCOPE__DEFER(finalize, session, format);
    kscope__clock_refresh();
    pthread_mutex_lock(&kscope__session_lock);
    int ignore = launcher_slot >= 0;
    pthread_mutex_unlock(&kscope__session_lock);
    if (ignore)
        return 0; /* the launcher writes the profile when the program ends */
    return for_sessions(session, finalize_one, format);
}

int kscope_data(int session, const char *format, char **out, size_t *len)
{
    KSCOPE__DEFER(data, session, format, out, len);
    if (!out || !len)
        return kscope__fail(KSCOPE_EINVAL, "kscope_data needs out and len");
    *out = NULL;
    *len = 0;
    pthread_mutex_lock(&kscope__session_lock);
    kscope__session *s = kscope__session_get(session);
    const kscope__format *f = NULL;
    int rc = s ? kscope__session_format(s, format, &f) : KSCOPE_ENOSESSION;
    if (rc == 0) {
        catch_up();
        kscope__gpu_flush(s); /* put off during a capture: the data so far */
        rc = kscope__session_serialize(s, f, NULL, out, len);
    }
    pthread_mutex_unlock(&kscope__session_lock);
    return rc;
}

void kscope_free(void *p)
{
    free(p);
}

int64_t kscope__session_count(int session, size_t offset)
{
    pthread_mutex_lock(&kscope__session_lock);
    kscope__session *s = kscope__session_find(session);
    int64_t n = s ? __atomic_load_n((int64_t *)((char *)s + offset), __ATOMIC_RELAXED) : 0;
    pthread_mutex_unlock(&kscope__session_lock);
    return n;
}

int64_t kscope_dropped(int session)
{
    return kscope__session_count(session, offsetof(kscope__session, dropped));
}

/* ---------------------------------------------------------------- launcher */

int kscope__launcher_start(const kscope_session_opts *opts)
{
    kscope_session_opts defaults = {0};
    kscope_profiling();
    kscope__clock_init();
    pthread_mutex_lock(&kscope__session_lock);
    int rc = launcher_slot >= 0 ? kscope__sessions[launcher_slot].id
                                : start_locked(opts ? opts : &defaults);
    if (rc >= 0 && launcher_slot < 0)
        launcher_slot = kscope__session_find(rc)->slot;
    pthread_mutex_unlock(&kscope__session_lock);
    return rc;
}

int kscope__launcher_session(void)
{
    pthread_mutex_lock(&kscope__session_lock);
    int id = launcher_slot >= 0 ? kscope__sessions[launcher_slot].id : -1;
    pthread_mutex_unlock(&kscope__session_lock);
    return id;
}

int kscope__launcher_finalize(void)
{
    pthread_mutex_lock(&kscope__session_lock);
    int slot = launcher_slot;
    int rc = 1;
    if (slot >= 0) {
        rc = finalize_one(&kscope__sessions[slot], NULL);
    }
    pthread_mutex_unlock(&kscope__session_lock);
    return rc;
}
