/*
 * hatchet-root.h - what the ROOT node of a .hatchet holds, decided once for
 * both encodings (hatchet-json.c, hatchet-msgpack.c).
 *
 * Readers of the format learn from ROOT's metrics which metrics roll up:
 * LLNL Hatchet (and proton-viewer on top of it) sums every metric ROOT
 * lists over each subtree, and kscope's readers take a 0 there as "this
 * metric is inclusive". So ROOT's "metrics" hold only numbers Hatchet may
 * sum:
 *   - 0 placeholders of the inclusive scalar metrics, of the metric's own
 *     type as Proton writes them: 0 where every node holds an integer,
 *     0.0 where some node holds a floating-point number;
 *   - ROOT's own values of inclusive metrics and of metrics no other node
 *     holds (a per-node metric's value at ROOT, a merge's time_imbalance,
 *     would be added to every other node's).
 * Numbers keep their type there too. (A column where every node holds an
 * integer is an integer column, which proton-viewer's --print-sorted
 * cannot format, on Proton's files and kscope's alike.)
 * The rest goes into one more member of ROOT, "kscope", which Hatchet and
 * proton-viewer skip:
 *
 *   "kscope": {"inclusive": [every inclusive metric],
 *              "metrics": {ROOT's other values: strings, vectors, numbers
 *                          of per-node metrics}}
 *
 * "inclusive" is written when the 0 rule cannot say it all (an inclusive
 * vector has no placeholder; ROOT's own value may be 0 or not).
 *
 * A tree that holds no metric at all gets Proton's kernel placeholders
 * ("count" and "time (ns)", 0), so proton-viewer finds a metric and keeps
 * the ROOT it would otherwise prune.
 */
#ifndef KSCOPE_HATCHET_ROOT_H
#define KSCOPE_HATCHET_ROOT_H

#include "profile/ptree.h"

#include <stdint.h>

/* The name of ROOT's extra member and of its two fields. */
#define KSCOPE__HROOT_KEY       "kscope"
#define KSCOPE__HROOT_INCLUSIVE "inclusive"
#define KSCOPE__HROOT_METRICS   "metrics"

typedef struct kscope__hroot {
    const kscope__pmetric **own; /* ROOT's numbers: in its "metrics" */
    uint32_t nown;
    const char **zeros;         /* names listed in ROOT's "metrics" with 0 */
    unsigned char *zero_double; /* per zero: written 0.0 (else 0) */
    uint32_t nzeros;
    const kscope__pmetric **aside; /* ROOT's own values under "kscope" */
    uint32_t naside;
    int list_inclusive;     /* write every inclusive name under "kscope" */
    const char **inclusive; /* that list (t->inclusive, plus placeholders) */
    uint32_t ninclusive;
} kscope__hroot;

/* Decide ROOT's layout for tree t. 0 or KSCOPE_ENOMEM; free with
 * kscope__hroot_free (also after a failure). */
int kscope__hroot_plan(const kscope__ptree *t, kscope__hroot *r);
void kscope__hroot_free(kscope__hroot *r);

/* Whether ROOT gets the "kscope" member at all. */
static inline int kscope__hroot_has_aside(const kscope__hroot *r)
{
    return r->list_inclusive || r->naside > 0;
}

#endif /* KSCOPE_HATCHET_ROOT_H */
