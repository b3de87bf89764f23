/*
 * phase.c - a session's data by phase (Proton's data phases): advance to a
 * new phase, ask whether a phase is complete, clear phases, serialize a
 * phase.
 *
 * The current phase is the session's live data. Advancing waits for the
 * GPU records of the work launched so far (the backend's flush), takes
 * the current data as the completed phase (a tree, or a trace's bytes)
 * and starts the next phase empty; in periodic flushing mode the completed
 * phase is written to "<name>.part_<N>.<ext>" at once and not kept. A
 * completed phase is complete (all its GPU records arrived) unless a graph
 * capture was open when it ended (the flush is then put off, as a capture
 * must not be broken); finalize writes the kept ones beside the current
 * one.
 */
#include "core.h"
#include "format/format.h"

#include <stdlib.h>
#include <string.h>

/* Make room for phase p's record. */
static int phase_room(kscope__session *s, int p)
{
    if ((size_t)p < s->capphases)
        return 0;
    size_t cap = s->capphases ? s->capphases * 2 : 8;
    while (cap <= (size_t)p)
        cap *= 2;
    kscope__phase *ph = realloc(s->phases, cap * sizeof *ph);
    if (!ph)
        return kscope__fail(KSCOPE_ENOMEM, "out of memory keeping phase %d of '%s'", p, s->name);
    memset(ph + s->capphases, 0, (cap - s->capphases) * sizeof *ph);
    s->phases = ph;
    s->capphases = cap;
    return 0;
}

static void phase_drop(kscope__phase *ph, kscope__phase_state state)
{
    kscope__ptree_free(ph->tree);
    free(ph->trace);
    ph->tree = NULL;
    ph->trace = NULL;
    ph->trace_len = 0;
    ph->state = state;
}

void kscope__phase_reset_current(kscope__session *s)
{
    pthread_mutex_lock(&s->lock);
    kscope__reset_slot(s->slot);
    __atomic_fetch_add(&s->gen, 1, __ATOMIC_RELEASE); /* threads read it as they record */
    s->ngev = 0;
    pthread_mutex_unlock(&s->lock);
    /* Scopes open across the reset count their time from here. */
    if (s->active)
        atomic_store(&kscope__act_ticks[s->slot], kscope__ticks());
}

/* Periodic flushing: the completed phase p, written to its part file. */
static int write_part(kscope__session *s, int p)
{
    const kscope__format *f = NULL;
    char path[1100];
    char *buf = NULL;
    size_t len = 0;
    int rc = kscope__session_format(s, NULL, &f);
    if (rc == 0)
        rc = kscope__session_serialize(s, f, &buf, &len);
    if (rc == 0) {
        kscope__session_path(s, f, p, path, sizeof path);
        rc = kscope__output_file(path, buf, len);
    }
    free(buf);
    return rc;
}

int kscope__phase_advance(kscope__session *s)
{
    int p = s->phase, rc;
    if ((rc = phase_room(s, p)) != 0)
        return rc;
    /* Put off while a graph capture is open (a flush would end it): the
     * phase is then kept without the records still to come. */
    int put_off = kscope__gpu_flush(s);
    kscope__phase *ph = &s->phases[p];
    memset(ph, 0, sizeof *ph);
    ph->incomplete = put_off != 0;
    if (s->periodic) {
        if ((rc = write_part(s, p)) != 0)
            return rc;
        ph->state = KSCOPE__PHASE_WRITTEN;
    } else if (s->trace) {
        const kscope__format *f = kscope__format_default(KSCOPE__KIND_TRACE);
        if ((rc = kscope__session_serialize(s, f, &ph->trace, &ph->trace_len)) != 0)
            return rc;
    } else if (!(ph->tree = kscope__build_tree(s->slot, kscope__ticks()))) {
        return kscope__fail(KSCOPE_ENOMEM, "out of memory keeping phase %d of '%s'", p, s->name);
    }
    kscope__phase_reset_current(s);
    s->phase = p + 1;
    kscope__sampling_phase(s);
    return s->phase;
}

int kscope__phase_write_kept(kscope__session *s, const kscope__format *f)
{
    for (int p = 0; p < s->phase; p++) {
        kscope__phase *ph = &s->phases[p];
        if (ph->state != KSCOPE__PHASE_KEPT)
            continue;
        char path[1100], *buf = NULL;
        size_t len = 0;
        int rc = 0;
        kscope__session_path(s, f, p, path, sizeof path);
        if (ph->tree)
            rc = f->write_tree(ph->tree, &buf, &len);
        if (rc == 0)
            rc = kscope__output_file(path, ph->tree ? buf : ph->trace,
                                     ph->tree ? len : ph->trace_len);
        free(buf);
        if (rc)
            return rc;
    }
    return 0;
}

void kscope__phase_free(kscope__session *s)
{
    for (size_t p = 0; p < s->capphases; p++)
        phase_drop(&s->phases[p], KSCOPE__PHASE_CLEARED);
    free(s->phases);
    s->phases = NULL;
    s->capphases = 0;
    s->phase = 0;
}

/* ----------------------------------------------------------- public API */

/* Phase p of s exists (0 <= p <= current), else EINVAL naming both. */
static int phase_check(kscope__session *s, int p)
{
    if (p < 0 || p > s->phase)
        return kscope__fail(KSCOPE_EINVAL,
                            "phase %d of session %d has not started (it is in phase %d)", p, s->id,
                            s->phase);
    return 0;
}

int kscope_advance_phase(int session)
{
    kscope__run_recording();
    kscope__clock_refresh();
    pthread_mutex_lock(&kscope__session_lock);
    kscope__session *s = kscope__session_get(session);
    int rc = s ? kscope__phase_advance(s) : KSCOPE_ENOSESSION;
    pthread_mutex_unlock(&kscope__session_lock);
    return rc;
}

int kscope_phase_complete(int session, int phase)
{
    pthread_mutex_lock(&kscope__session_lock);
    kscope__session *s = kscope__session_get(session);
    int rc = s ? phase_check(s, phase) : KSCOPE_ENOSESSION;
    if (rc == 0)
        rc = phase < s->phase && s->phases[phase].state != KSCOPE__PHASE_CLEARED &&
             !s->phases[phase].incomplete;
    pthread_mutex_unlock(&kscope__session_lock);
    return rc;
}

int kscope_clear_phase(int session, int phase, int up_to)
{
    pthread_mutex_lock(&kscope__session_lock);
    kscope__session *s = kscope__session_get(session);
    int rc = s ? phase_check(s, phase) : KSCOPE_ENOSESSION;
    for (int p = up_to ? 0 : phase; rc == 0 && p <= phase; p++) {
        if (p == s->phase)
            kscope__phase_reset_current(s);
        else if (s->phases[p].state != KSCOPE__PHASE_WRITTEN)
            phase_drop(&s->phases[p], KSCOPE__PHASE_CLEARED);
    }
    pthread_mutex_unlock(&kscope__session_lock);
    return rc;
}

/* A completed phase's data in format f. */
static int kept_data(kscope__session *s, int p, const kscope__format *f, char **out, size_t *len)
{
    kscope__phase *ph = &s->phases[p];
    if (ph->state != KSCOPE__PHASE_KEPT)
        return kscope__fail(KSCOPE_ESTATE, "Session %d phase %d has no data (%s)", s->id, p,
                            ph->state == KSCOPE__PHASE_WRITTEN ? "written to its part file"
                                                               : "cleared");
    if (ph->tree)
        return f->write_tree(ph->tree, out, len);
    if (!(*out = malloc(ph->trace_len + 1))) /* NUL-ended, as kscope_data's */
        return kscope__fail(KSCOPE_ENOMEM, "out of memory copying phase %d", p);
    memcpy(*out, ph->trace, ph->trace_len);
    (*out)[ph->trace_len] = '\0';
    *len = ph->trace_len;
    return 0;
}

int kscope_data_phase(int session, int phase, const char *format, char **out, size_t *len)
{
    if (!out || !len)
        return kscope__fail(KSCOPE_EINVAL, "kscope_data_phase needs out and len");
    *out = NULL;
    *len = 0;
    pthread_mutex_lock(&kscope__session_lock);
    kscope__session *s = kscope__session_get(session);
    const kscope__format *f = NULL;
    int rc = s ? phase_check(s, phase) : KSCOPE_ENOSESSION;
    if (rc == 0)
        rc = kscope__session_format(s, format, &f);
    if (rc == 0 && phase < s->phase) {
        rc = kept_data(s, phase, f, out, len);
    } else if (rc == 0) {
        kscope__gpu_flush(s);
        rc = kscope__session_serialize(s, f, out, len);
    }
    pthread_mutex_unlock(&kscope__session_lock);
    return rc;
}
