/*
 * phase.c - a session's data by phase (Proton's data phases): advance to a
 * new phase, ask whether a phase is complete, clear phases, serialize a
 * phase.
 *
 * The current phase is the session's live data. Advancing waits for the
 * GPU records of the work launched so far (the backend's flush), takes
 * the current data as the completed phase (a tree, or a trace's events on
 * disk, spill.c)
 * and starts the next phase empty; in periodic flushing mode the completed
 * phase is written to "<name>.part_<N>.<ext>" at once and not kept. A
 * completed phase is complete (all its GPU records arrived) unless a graph
 * capture was open when it ended (the flush is then put off, as a capture
 * must not be broken); finalize writes the kept ones beside the current
 * one.
 */
#include "core.h"
#include "format/format.h"
#include "util/util.h"

#include <stdlib.h>
#include <string.h>

/* Make room for phase p's record. */
static int phase_room(kscope__session *s, int p)
{
    if ((size_t)p < s->capphases)
        return 0;
    size_t had = s->capphases;
    if (KSCOPE__ROOM(s->phases, s->capphases, (size_t)p + 1, 8) != 0)
        return kscope__fail(KSCOPE_ENOMEM, "out of memory keeping phase %d of '%s'", p, s->name);
    memset(s->phases + had, 0, (s->capphases - had) * sizeof *s->phases);
    return 0;
}

static void phase_drop(kscope__phase *ph, kscope__phase_state state)
{
    kscope__ptree_free(ph->tree);
    kscope__spill_close(&ph->trace);
    ph->tree = NULL;
    ph->state = state;
}

/* Scopes open across a phase's start count their time from `now`. */
static void phase_started(kscope__session *s, uint64_t now)
{
    if (s->active)
        atomic_store(&kscope__act_ticks[s->slot], now);
}

void kscope__phase_reset_current(kscope__session *s)
{
    if (s->trace) {
        kscope__spill_drop(s);
    } else {
        pthread_mutex_lock(&s->lock);
        if (kscope__reset_slot(s->slot) != 0)
            kscope__warn_once("phase-reset",
                              "out of memory: session '%s' keeps counting calls made "
                              "before its phase was cleared",
                              s->name);
        pthread_mutex_unlock(&s->lock);
    }
    phase_started(s, kscope__ticks());
}

/* Write completed phase p's data (ph) to its part file. */
static int write_part(kscope__session *s, int p, const kscope__phase *ph)
{
    const kscope__format *f = NULL;
    char path[1100];
    int rc = kscope__session_format(s, NULL, &f);
    if (rc != 0)
        return rc;
    kscope__session_path(s, f, p, path, sizeof path);
    return kscope__session_output(s, f, ph, path);
}

/* A trace session's current phase, taken as the completed phase ph: its
 * events, all on disk now, kept there, or written to its part file
 * (periodic flushing). A part that cannot be written stays kept
 * (finalize writes it), and the error is returned. */
static int take_trace(kscope__session *s, int p, kscope__phase *ph, uint64_t now)
{
    int rc = kscope__spill_take(s, &ph->trace);
    if (rc != 0) {
        ph->state = KSCOPE__PHASE_CLEARED; /* its events are lost: the message says why */
        return rc;
    }
    ph->end_ticks = now;
    phase_started(s, now);
    rc = s->periodic ? write_part(s, p, ph) : 0;
    if (rc == 0 && s->periodic)
        phase_drop(ph, KSCOPE__PHASE_WRITTEN);
    return rc;
}

/* A tree session's current phase, taken as the completed phase ph: built
 * with its counts cut from the nodes (so each call lands in exactly one
 * phase), then written (periodic flushing) or kept. A part that cannot be
 * written is kept instead (finalize writes it), and the error returned. */
static int take_tree(kscope__session *s, int p, kscope__phase *ph, uint64_t now)
{
    kscope__ptree *t = kscope__build_tree(s->slot, now, 1);
    if (!t) {
        ph->state = KSCOPE__PHASE_CLEARED;
        return kscope__fail(KSCOPE_ENOMEM, "out of memory keeping phase %d of '%s'", p, s->name);
    }
    phase_started(s, now);
    ph->tree = t;
    int rc = s->periodic ? write_part(s, p, ph) : 0;
    if (rc == 0 && s->periodic)
        phase_drop(ph, KSCOPE__PHASE_WRITTEN);
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
    uint64_t now = kscope__ticks();
    rc = s->trace ? take_trace(s, p, ph, now) : take_tree(s, p, ph, now);
    if (rc != 0 && ph->state != KSCOPE__PHASE_KEPT)
        return rc;
    s->phase = p + 1;
    kscope__sampling_phase(s);
    return rc ? rc : s->phase;
}

int kscope__phase_write_kept(kscope__session *s, const kscope__format *f)
{
    for (int p = 0; p < s->phase; p++) {
        kscope__phase *ph = &s->phases[p];
        if (ph->state != KSCOPE__PHASE_KEPT)
            continue;
        char path[1100];
        kscope__session_path(s, f, p, path, sizeof path);
        int rc = kscope__session_output(s, f, ph, path);
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
    return kscope__session_serialize(s, f, ph, out, len);
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
        rc = kscope__session_serialize(s, f, NULL, out, len);
    }
    pthread_mutex_unlock(&kscope__session_lock);
    return rc;
}
