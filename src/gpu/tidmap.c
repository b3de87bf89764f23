/*
 * tidmap.c - CUPTI's thread ids to OS thread ids.
 *
 * CUPTI names the thread of an API record by the low 32 bits of its
 * pthread_t; kscope's trace names threads by their OS id (gettid), which
 * is what puts a launch on the same track as the scopes around it. Each
 * thread adds its pair once (at its first scope under capture); the buffer
 * thread looks pairs up. Lock-free: a slot's key is claimed by CAS, its
 * value published with release.
 */
#include "gpu/gpu-internal.h"

static struct {
    _Atomic uint32_t key; /* CUPTI's id; 0: free */
    _Atomic uint32_t tid; /* OS id; 0: not yet written */
} tid_map[KSCOPE__TID_SLOTS];

static uint32_t tid_slot(uint32_t key)
{
    return (key * 2654435761u) >> 20; /* 12 bits: KSCOPE__TID_SLOTS */
}

int kscope__gpu_tid_note(uint32_t cupti_id, uint32_t os_tid)
{
    if (!cupti_id)
        return KSCOPE_EINVAL;
    for (uint32_t i = 0, s = tid_slot(cupti_id); i < KSCOPE__TID_SLOTS;
         i++, s = (s + 1) % KSCOPE__TID_SLOTS) {
        uint32_t expected = 0;
        if (atomic_compare_exchange_strong(&tid_map[s].key, &expected, cupti_id) ||
            expected == cupti_id) {
            atomic_store_explicit(&tid_map[s].tid, os_tid, memory_order_release);
            return 0;
        }
    }
    return KSCOPE_ENOMEM;
}

uint32_t kscope__gpu_tid_lookup(uint32_t cupti_id)
{
    if (!cupti_id)
        return 0;
    for (uint32_t i = 0, s = tid_slot(cupti_id); i < KSCOPE__TID_SLOTS;
         i++, s = (s + 1) % KSCOPE__TID_SLOTS) {
        uint32_t k = atomic_load_explicit(&tid_map[s].key, memory_order_acquire);
        if (k == cupti_id)
            return atomic_load_explicit(&tid_map[s].tid, memory_order_acquire);
        if (k == 0)
            return 0;
    }
    return 0;
}
