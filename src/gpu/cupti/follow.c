/*
 * follow.c - which runtime and driver calls the CUPTI backend follows with
 * callbacks, and which of them are on.
 *
 * Each followed call costs a launch two CUPTI callbacks (enter and exit),
 * about a third of what the bare activity floor costs (bench/gpu). They
 * tell a kernel's host context, so kscope turns them on only when a
 * context can differ from the root: once any thread has annotated, for
 * trace sessions (launches on the host timeline), launch metadata, PC
 * sampling or device scopes (cupti.c decides). Until then a kernel's
 * record goes to the root, where it would have gone anyway, and a launch
 * costs what CUPTI's activity records alone cost. Three groups:
 *   capture    stream-capture begin and end: always on (a handful of calls)
 *   graphs     graph launches: on while the gate is open (graph work and
 *              the copies of a graph launch are told apart by them)
 *   launches   kernel launches, copies and sets: on while the gate is open
 *              and a context can differ from the root
 */
#include "gpu/cupti/cupti-internal.h"

#include <string.h>

uint8_t kscope__call_class[2][KSCOPE__CBID_MAX];

static const CUpti_CallbackDomain domains[2] = {CUPTI_CB_DOMAIN_RUNTIME_API,
                                                CUPTI_CB_DOMAIN_DRIVER_API};
static int group_on[2]; /* graphs, launches (the caller's lock) */

void kscope__follow_classify(CUptiResult (*name_of)(CUpti_CallbackDomain, uint32_t, const char **))
{
    memset(kscope__call_class, 0, sizeof kscope__call_class);
    for (const kscope__known_call *k = kscope__known_calls; k->cbid; k++)
        kscope__call_class[k->domain == CUPTI_CB_DOMAIN_DRIVER_API][k->cbid] = k->cls;
    if (!name_of) {
        kscope__warn_once("cupti-names",
                          "this CUPTI cannot name its callbacks: copies and sets go to the root");
        return;
    }
    for (int d = 0; d < 2; d++) {
        for (uint32_t id = 1; id < KSCOPE__CBID_MAX; id++) {
            const char *name = NULL;
            if (!kscope__call_class[d][id] && name_of(domains[d], id, &name) == CUPTI_SUCCESS &&
                name)
                kscope__call_class[d][id] = (uint8_t)kscope__gpu_call_class(name);
        }
    }
}

/* The group of call (d, id): -1 capture or not followed, 0 graphs, 1
 * launches. */
static int group_of(int d, uint32_t id)
{
    uint8_t cls = kscope__call_class[d][id];
    if (!cls || cls >= KSCOPE__CALL_BEGIN_CAPTURE)
        return -1;
    return cls == KSCOPE__CALL_LAUNCH && kscope__graphs_is_launch(d, id) ? 0 : 1;
}

static CUptiResult set_group(int g, int on, CUpti_SubscriberHandle sub, kscope__enable_fn enable)
{
    for (int d = 0; d < 2; d++) {
        for (uint32_t id = 1; id < KSCOPE__CBID_MAX; id++) {
            CUptiResult rc =
                group_of(d, id) == g ? enable((uint32_t)on, sub, domains[d], id) : CUPTI_SUCCESS;
            if (rc != CUPTI_SUCCESS)
                return rc;
        }
    }
    group_on[g] = on;
    return CUPTI_SUCCESS;
}

CUptiResult kscope__follow_start(CUpti_SubscriberHandle sub, kscope__enable_fn enable)
{
    group_on[0] = group_on[1] = 0;
    for (int d = 0; d < 2; d++) {
        for (uint32_t id = 1; id < KSCOPE__CBID_MAX; id++) {
            CUptiResult rc = kscope__call_class[d][id] >= KSCOPE__CALL_BEGIN_CAPTURE
                                 ? enable(1, sub, domains[d], id)
                                 : CUPTI_SUCCESS;
            if (rc != CUPTI_SUCCESS)
                return rc;
        }
    }
    /* Graph nodes, graphs, execs (graphs.c). Without them graph work goes
     * to its launch, as before profiling started. */
    for (size_t i = 0; kscope__graph_fns.node_id && kscope__graph_resource_cbids[i]; i++)
        enable(1, sub, CUPTI_CB_DOMAIN_RESOURCE, kscope__graph_resource_cbids[i]);
    return CUPTI_SUCCESS;
}

CUptiResult kscope__follow_set(int graphs, int launches, CUpti_SubscriberHandle sub,
                               kscope__enable_fn enable)
{
    CUptiResult rc = CUPTI_SUCCESS;
    if (group_on[0] != graphs)
        rc = set_group(0, graphs, sub, enable);
    if (rc == CUPTI_SUCCESS && group_on[1] != launches)
        rc = set_group(1, launches, sub, enable);
    return rc;
}

int kscope__follow_launches(void)
{
    return group_on[1];
}
