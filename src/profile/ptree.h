/*
 * ptree.h - the profile tree: the in-memory form of a .hatchet file.
 *
 * Both halves of kscope meet here. A session is finalised into a ptree and
 * written by the tree formats' writers (format/format.h); the readers
 * parse every format into a ptree for view/top/diff/merge/convert. Strings
 * live in the tree's arena and are interned, so comparing two keys of one
 * tree is a pointer comparison. A tree the recorder builds (core/build.c)
 * names its nodes with the recorder's own interned names instead, which
 * are as unique and outlive the tree: nothing is copied per node. A node
 * is 56 bytes; its indexes and other rare parts are made only where
 * needed, its large arrays grow in place.
 */
#ifndef KSCOPE_PTREE_H
#define KSCOPE_PTREE_H

#include <stddef.h>
#include <stdint.h>

typedef enum {
    KSCOPE__V_INT,
    KSCOPE__V_DOUBLE,
    KSCOPE__V_STRING,
    KSCOPE__V_INTVEC,
    KSCOPE__V_DOUBLEVEC,
} kscope__vtype;

typedef struct kscope__pmetric {
    const char *key; /* interned, suffix-free, e.g. "time (ns)" */
    kscope__vtype type;
    uint32_t n; /* vector length */
    union {
        int64_t i;
        double d;
        const char *s; /* interned */
        int64_t *iv;   /* arena */
        double *dv;    /* arena */
    } v;
} kscope__pmetric;

/* A hash index over a node's children or metrics, so finding one by name
 * takes constant time when there are many: slot holds position + 1 (0 is
 * empty) of the first entry with a name. It covers entries [0, upto) and
 * catches up when the node is next searched with its tree at hand, so
 * entries renamed right after being added (as a reader fills them in) are
 * indexed by their final names. Entries are checked against the array, so
 * one left behind by a dropped last entry is skipped. */
typedef struct kscope__pindex {
    uint32_t *slot; /* arena; NULL: search the array */
    uint32_t cap, used, upto;
} kscope__pindex;

/* What few nodes need: indexes (many children or metrics), a frame type
 * other than "function". */
typedef struct kscope__prare {
    kscope__pindex child, metric;
    const char *type; /* interned; NULL: "function" */
} kscope__prare;

typedef struct kscope__pnode kscope__pnode;
struct kscope__pnode {
    const char *name; /* interned */
    kscope__pnode *parent;
    kscope__pnode **children;
    uint32_t nchildren, capchildren;
    kscope__pmetric *metrics;
    uint32_t nmetrics, capmetrics;
    kscope__prare *rare; /* NULL until needed */
};

/* One device of the device-info object ({"<type>": {"0": {...}}}). */
typedef struct kscope__pdevice {
    const char *type; /* the device type its GPU backend names */
    uint32_t id;
    const char *arch; /* "90" */
    int64_t num_sms, clock_rate, memory_clock_rate, bus_width;
} kscope__pdevice;

typedef struct kscope__arena_chunk kscope__arena_chunk;

typedef struct kscope__ptree {
    kscope__pnode *root;
    kscope__pdevice *devices;
    uint32_t ndevices, capdevices;
    /* names of metrics that roll up (listed with 0 in ROOT, or in ROOT's
     * "kscope" member: format/hatchet-root.h). */
    const char **inclusive;
    uint32_t ninclusive, capinclusive;
    /* the same names as a hash set of interned pointers (arena; 0 empty) */
    const char **inclusive_set;
    uint32_t inclusive_set_cap;
    /* arena and string interning */
    kscope__arena_chunk *chunks;
    struct kscope__big_block *big; /* large arrays, reallocated in place */
    char **strtab;
    uint32_t strtab_cap, strtab_n;
    size_t bytes; /* arena bytes in use */
} kscope__ptree;

/* Create an empty tree with a ROOT node. NULL on out of memory. */
kscope__ptree *kscope__ptree_new(void);
void kscope__ptree_free(kscope__ptree *t);

/* Arena allocation (zeroed, 8-byte aligned); freed with the tree. */
void *kscope__ptree_alloc(kscope__ptree *t, size_t size);

/* Intern a string (len bytes, need not be NUL-terminated). */
const char *kscope__ptree_intern(kscope__ptree *t, const char *s, size_t len);
const char *kscope__ptree_intern_cstr(kscope__ptree *t, const char *s);

/* A node's frame type ("function" unless set), and setting it (interned
 * in t by the caller); 0 or KSCOPE_ENOMEM. */
const char *kscope__pnode_type(const kscope__pnode *n);
int kscope__pnode_set_type(kscope__ptree *t, kscope__pnode *n, const char *type);

/* Room for `count` children of n in all (a builder that knows how many
 * will come spares the array's growth). 0 or KSCOPE_ENOMEM. */
int kscope__pnode_reserve(kscope__ptree *t, kscope__pnode *n, uint32_t count);

/* Append a new child (no merge). */
kscope__pnode *kscope__pnode_add(kscope__ptree *t, kscope__pnode *parent, const char *name);

/* The child named `name` (interned pointer), created when missing. */
kscope__pnode *kscope__pnode_child(kscope__ptree *t, kscope__pnode *parent, const char *name);

/* Forget n's indexes: call after reordering or removing its children or
 * metrics in place (they are rebuilt when next needed). */
void kscope__pnode_reindex(kscope__pnode *n);

/* Find a metric by interned key; NULL when absent. */
kscope__pmetric *kscope__pnode_metric(const kscope__pnode *n, const char *key);
/* The metric `key` (interned in t) of n, appended zeroed (type INT) when
 * missing, *fresh then 1. NULL on out of memory. */
kscope__pmetric *kscope__pnode_metric_slot(kscope__ptree *t, kscope__pnode *n, const char *key,
                                           int *fresh);

/* Set (overwrite) or add to (sum) a metric. Keys are interned by these
 * calls. Adding to a metric of another type converts to double. */
int kscope__pnode_set_int(kscope__ptree *t, kscope__pnode *n, const char *key, int64_t v);
int kscope__pnode_set_double(kscope__ptree *t, kscope__pnode *n, const char *key, double v);
int kscope__pnode_set_string(kscope__ptree *t, kscope__pnode *n, const char *key, const char *s);
int kscope__pnode_set_vec(kscope__ptree *t, kscope__pnode *n, const char *key, kscope__vtype type,
                          const void *values, uint32_t count);
/* Set m to a copy of count values (int64_t for KSCOPE__V_INTVEC, double
 * for KSCOPE__V_DOUBLEVEC) kept in t's arena: what set_vec stores, for a
 * caller that holds the slot. 0 or KSCOPE_ENOMEM. */
int kscope__pmetric_put_vec(kscope__ptree *t, kscope__pmetric *m, kscope__vtype type,
                            const void *values, uint32_t count);
int kscope__pnode_add_int(kscope__ptree *t, kscope__pnode *n, const char *key, int64_t v);
int kscope__pnode_add_double(kscope__ptree *t, kscope__pnode *n, const char *key, double v);
/* Set metric `key`, already interned in t, to an INT (i) or a DOUBLE (d):
 * what the two setters above do once they have interned their key, for a
 * reader that interns a key once for many values. 0 or KSCOPE_ENOMEM. */
int kscope__pnode_put_number(kscope__ptree *t, kscope__pnode *n, const char *key,
                             kscope__vtype type, int64_t i, double d);

/* Numeric value of a metric as double (vectors: sum); 0 when absent. */
double kscope__pmetric_number(const kscope__pmetric *m);

/* Mark a metric name as inclusive (appears with 0 in ROOT). */
int kscope__ptree_add_inclusive(kscope__ptree *t, const char *key);
int kscope__ptree_is_inclusive(const kscope__ptree *t, const char *key);
/* Forget every inclusive name (a tree that holds no value). */
void kscope__ptree_clear_inclusive(kscope__ptree *t);

/* Device-info grouping ({"<type>": {"0": ..., "1": ...}}): whether device i
 * is the first of its type, and how many devices have a type. */
int kscope__ptree_device_first_of_type(const kscope__ptree *t, uint32_t i);
uint32_t kscope__ptree_devices_of_type(const kscope__ptree *t, const char *type);

/* Add or find a device-info entry. */
kscope__pdevice *kscope__ptree_device(kscope__ptree *t, const char *type, uint32_t id);

/* Walk the tree depth first without recursion: enter(node) before its
 * children, leave(node) after them (leave may be NULL). 0 or KSCOPE_ENOMEM. */
int kscope__ptree_walk(const kscope__ptree *t, void (*enter)(const kscope__pnode *, void *),
                       void (*leave)(const kscope__pnode *, void *), void *arg);

#endif /* KSCOPE_PTREE_H */
