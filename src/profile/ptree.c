/*
 * ptree.c - the profile tree (see ptree.h): arena, string interning, nodes
 * and metrics.
 */
#include "profile/ptree.h"
#include "kscope.h"

#include <stdlib.h>
#include <string.h>

struct kscope__arena_chunk {
    kscope__arena_chunk *next;
    size_t used, size;
    _Alignas(16) unsigned char data[];
};

#define ARENA_CHUNK (256 * 1024)

void *kscope__ptree_alloc(kscope__ptree *t, size_t size)
{
    size = (size + 7) & ~(size_t)7;
    kscope__arena_chunk *c = t->chunks;
    if (!c || c->used + size > c->size) {
        size_t cap = size > ARENA_CHUNK ? size : ARENA_CHUNK;
        c = malloc(sizeof *c + cap);
        if (!c)
            return NULL;
        c->used = 0;
        c->size = cap;
        c->next = t->chunks;
        t->chunks = c;
    }
    void *p = c->data + c->used;
    c->used += size;
    t->bytes += size;
    memset(p, 0, size);
    return p;
}

static uint64_t hash_bytes(const char *s, size_t n)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
    return h;
}

static int strtab_grow(kscope__ptree *t)
{
    uint32_t cap = t->strtab_cap ? t->strtab_cap * 2 : 256;
    char **tab = calloc(cap, sizeof *tab);
    if (!tab)
        return -1;
    for (uint32_t i = 0; i < t->strtab_cap; i++) {
        char *s = t->strtab[i];
        if (!s)
            continue;
        uint32_t j = (uint32_t)hash_bytes(s, strlen(s)) & (cap - 1);
        while (tab[j])
            j = (j + 1) & (cap - 1);
        tab[j] = s;
    }
    free(t->strtab);
    t->strtab = tab;
    t->strtab_cap = cap;
    return 0;
}

const char *kscope__ptree_intern(kscope__ptree *t, const char *s, size_t len)
{
    if ((t->strtab_n + 1) * 5 > t->strtab_cap * 4 && strtab_grow(t) != 0)
        return NULL;
    uint32_t j = (uint32_t)hash_bytes(s, len) & (t->strtab_cap - 1);
    for (; t->strtab[j]; j = (j + 1) & (t->strtab_cap - 1)) {
        const char *e = t->strtab[j];
        if (strncmp(e, s, len) == 0 && e[len] == 0)
            return e;
    }
    char *copy = kscope__ptree_alloc(t, len + 1);
    if (!copy)
        return NULL;
    memcpy(copy, s, len);
    copy[len] = 0;
    t->strtab[j] = copy;
    t->strtab_n++;
    return copy;
}

const char *kscope__ptree_intern_cstr(kscope__ptree *t, const char *s)
{
    return kscope__ptree_intern(t, s, strlen(s));
}

kscope__ptree *kscope__ptree_new(void)
{
    kscope__ptree *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    t->root = kscope__ptree_alloc(t, sizeof *t->root);
    if (!t->root || !(t->root->name = kscope__ptree_intern_cstr(t, "ROOT"))) {
        kscope__ptree_free(t);
        return NULL;
    }
    return t;
}

/* A large array of the tree: malloc'd on its own, listed in the tree, so
 * that growing it frees its old space (an arena array left behind as it
 * doubles would double what a million children cost). */
typedef struct kscope__big_block {
    struct kscope__big_block *prev, *next;
    _Alignas(16) unsigned char data[];
} big_block;

/* Arrays of at least this many bytes are big blocks. */
#define BIG_MIN 4096

static big_block *big_of(void *p)
{
    return (big_block *)((unsigned char *)p - offsetof(big_block, data));
}

static void big_link(kscope__ptree *t, big_block *b)
{
    b->prev = NULL;
    b->next = t->big;
    if (t->big)
        t->big->prev = b;
    t->big = b;
}

static void big_unlink(kscope__ptree *t, big_block *b)
{
    if (b->prev)
        b->prev->next = b->next;
    else
        t->big = b->next;
    if (b->next)
        b->next->prev = b->prev;
}

/* A big block of size bytes holding old's first keep bytes (old: a big
 * block or NULL); old is gone once this returns non-NULL. */
static void *big_resize(kscope__ptree *t, void *old, size_t size)
{
    big_block *b = old ? big_of(old) : NULL;
    if (b)
        big_unlink(t, b);
    big_block *nb = realloc(b, sizeof *nb + size);
    if (!nb) {
        if (b)
            big_link(t, b);
        return NULL;
    }
    big_link(t, nb);
    return nb->data;
}

static void big_free(kscope__ptree *t, void *p)
{
    if (!p)
        return;
    big_block *b = big_of(p);
    big_unlink(t, b);
    free(b);
}

void kscope__ptree_free(kscope__ptree *t)
{
    if (!t)
        return;
    kscope__arena_chunk *c = t->chunks;
    while (c) {
        kscope__arena_chunk *next = c->next;
        free(c);
        c = next;
    }
    while (t->big)
        big_free(t, t->big->data);
    free(t->strtab);
    free(t);
}

/* Grow an array of cap elements of esz bytes holding n. A small one is in
 * the arena and doubles (its old space stays there until the tree is
 * freed: bounded by the live size); from BIG_MIN bytes on it is a big
 * block that grows by half, reallocated in place. A node's metrics start
 * with room for two (a host scope has calls and time). */
static void *grow(kscope__ptree *t, void *old, uint32_t n, uint32_t *cap, size_t esz,
                  uint32_t first)
{
    int was_big = (size_t)*cap * esz >= BIG_MIN;
    uint32_t ncap = !*cap ? first : was_big ? *cap + *cap / 2 : *cap * 2;
    size_t bytes = (size_t)ncap * esz;
    void *p;
    if (was_big) {
        p = big_resize(t, old, bytes);
    } else {
        p = bytes < BIG_MIN ? kscope__ptree_alloc(t, bytes) : big_resize(t, NULL, bytes);
        if (p && old)
            memcpy(p, old, n * esz);
    }
    if (!p)
        return NULL;
    *cap = ncap;
    return p;
}

/* Nodes with at most this many children or metrics are searched in order:
 * an index would cost more than it saves. */
#define INDEX_MIN 8

typedef const char *(*index_key_fn)(const kscope__pnode *n, uint32_t i);

static const char *child_key(const kscope__pnode *n, uint32_t i)
{
    return n->children[i]->name;
}

static const char *metric_key(const kscope__pnode *n, uint32_t i)
{
    return n->metrics[i].key;
}

/* Interned strings are unique, so their addresses are the keys. */
static uint32_t ptr_hash(const char *p)
{
    uint64_t x = (uintptr_t)p;
    x ^= x >> 31;
    x *= 0xbf58476d1ce4e5b9ULL;
    x ^= x >> 29;
    return (uint32_t)x;
}

/* Position of the first of n's `count` entries named k; UINT32_MAX if none.
 * Entries past the index are searched in order. */
static uint32_t index_find(const kscope__pindex *ix, const kscope__pnode *n, uint32_t count,
                           index_key_fn key, const char *k)
{
    uint32_t mask = ix->cap - 1;
    for (uint32_t j = ptr_hash(k) & mask; ix->slot[j]; j = (j + 1) & mask) {
        uint32_t i = ix->slot[j] - 1;
        if (i < count && key(n, i) == k)
            return i;
    }
    for (uint32_t i = ix->upto; i < count; i++)
        if (key(n, i) == k)
            return i;
    return UINT32_MAX;
}

/* Note entry i, unless an earlier entry has its name (the first one wins). */
static void index_put(kscope__pindex *ix, const kscope__pnode *n, uint32_t count, index_key_fn key,
                      uint32_t i)
{
    const char *k = key(n, i);
    uint32_t mask = ix->cap - 1, j = ptr_hash(k) & mask;
    for (; ix->slot[j]; j = (j + 1) & mask) {
        uint32_t e = ix->slot[j] - 1;
        if (e < count && key(n, e) == k)
            return;
    }
    ix->slot[j] = i + 1;
    ix->used++;
}

/* The index's slots: arena, or a big block (freed when replaced). */
static uint32_t *index_slots(kscope__ptree *t, kscope__pindex *ix, uint32_t cap)
{
    if ((size_t)ix->cap * sizeof *ix->slot >= BIG_MIN)
        big_free(t, ix->slot);
    ix->slot = NULL;
    size_t bytes = (size_t)cap * sizeof *ix->slot;
    uint32_t *s = bytes < BIG_MIN ? kscope__ptree_alloc(t, bytes) : big_resize(t, NULL, bytes);
    if (s && bytes >= BIG_MIN)
        memset(s, 0, bytes);
    return s;
}

/* Bring the index up to n's `count` entries: built when the node passes
 * INDEX_MIN entries, rebuilt at most half full when four fifths full,
 * so each entry costs constant time amortised. Without memory for it the
 * node is searched in order, which is slower but still right. */
static void index_sync(kscope__ptree *t, kscope__pindex *ix, const kscope__pnode *n, uint32_t count,
                       index_key_fn key)
{
    if (count <= INDEX_MIN)
        return;
    if (ix->upto > count)
        ix->upto = count; /* entries were dropped */
    if (!ix->slot || (ix->used + count - ix->upto) * 5 > ix->cap * 4) {
        uint32_t cap = 32;
        while (cap < count * 2 && cap < (1u << 30))
            cap *= 2;
        ix->slot = index_slots(t, ix, cap);
        ix->cap = ix->slot ? cap : 0;
        ix->used = ix->upto = 0;
        if (!ix->slot)
            return;
    }
    for (; ix->upto < count; ix->upto++)
        index_put(ix, n, count, key, ix->upto);
}

/* n's indexes, made when it first needs one (NULL: none, or no memory). */
static kscope__prare *indexes(kscope__ptree *t, kscope__pnode *n, uint32_t count)
{
    if (!n->rare && count > INDEX_MIN)
        n->rare = kscope__ptree_alloc(t, sizeof *n->rare);
    return n->rare;
}

const char *kscope__pnode_type(const kscope__pnode *n)
{
    return n->rare && n->rare->type ? n->rare->type : "function";
}

int kscope__pnode_set_type(kscope__ptree *t, kscope__pnode *n, const char *type)
{
    int plain = strcmp(type, "function") == 0; /* nearly every node's: kept as NULL */
    if (!n->rare && plain)
        return 0;
    if (!n->rare && !(n->rare = kscope__ptree_alloc(t, sizeof *n->rare)))
        return KSCOPE_ENOMEM;
    n->rare->type = plain ? NULL : type;
    return 0;
}

int kscope__pnode_reserve(kscope__ptree *t, kscope__pnode *n, uint32_t count)
{
    if (count <= n->capchildren)
        return 0;
    size_t bytes = (size_t)count * sizeof *n->children;
    int was_big = (size_t)n->capchildren * sizeof *n->children >= BIG_MIN;
    kscope__pnode **c;
    if (was_big) {
        c = big_resize(t, n->children, bytes);
    } else {
        c = bytes < BIG_MIN ? kscope__ptree_alloc(t, bytes) : big_resize(t, NULL, bytes);
        if (c && n->nchildren)
            memcpy(c, n->children, n->nchildren * sizeof *c);
    }
    if (!c)
        return KSCOPE_ENOMEM;
    n->children = c;
    n->capchildren = count;
    return 0;
}

kscope__pnode *kscope__pnode_add(kscope__ptree *t, kscope__pnode *parent, const char *name)
{
    kscope__pnode *n = kscope__ptree_alloc(t, sizeof *n);
    if (!n)
        return NULL;
    n->name = name;
    n->parent = parent;
    if (parent->nchildren == parent->capchildren) {
        kscope__pnode **c =
            grow(t, parent->children, parent->nchildren, &parent->capchildren, sizeof *c, 4);
        if (!c)
            return NULL;
        parent->children = c;
    }
    parent->children[parent->nchildren++] = n;
    return n;
}

kscope__pnode *kscope__pnode_child(kscope__ptree *t, kscope__pnode *parent, const char *name)
{
    kscope__prare *x = indexes(t, parent, parent->nchildren);
    if (x)
        index_sync(t, &x->child, parent, parent->nchildren, child_key);
    if (x && x->child.slot) {
        uint32_t i = index_find(&x->child, parent, parent->nchildren, child_key, name);
        return i != UINT32_MAX ? parent->children[i] : kscope__pnode_add(t, parent, name);
    }
    for (uint32_t i = 0; i < parent->nchildren; i++)
        if (parent->children[i]->name == name)
            return parent->children[i];
    return kscope__pnode_add(t, parent, name);
}

void kscope__pnode_reindex(kscope__pnode *n)
{
    if (n->rare) { /* a big block's slots stay the tree's until it is freed */
        memset(&n->rare->child, 0, sizeof n->rare->child);
        memset(&n->rare->metric, 0, sizeof n->rare->metric);
    }
}

kscope__pmetric *kscope__pnode_metric(const kscope__pnode *n, const char *key)
{
    if (n->rare && n->rare->metric.slot) {
        uint32_t i = index_find(&n->rare->metric, n, n->nmetrics, metric_key, key);
        return i != UINT32_MAX ? &n->metrics[i] : NULL;
    }
    for (uint32_t i = 0; i < n->nmetrics; i++)
        if (n->metrics[i].key == key)
            return &n->metrics[i];
    return NULL;
}

kscope__pmetric *kscope__pnode_metric_slot(kscope__ptree *t, kscope__pnode *n, const char *key,
                                           int *fresh)
{
    kscope__prare *x = indexes(t, n, n->nmetrics);
    if (x)
        index_sync(t, &x->metric, n, n->nmetrics, metric_key);
    kscope__pmetric *m = kscope__pnode_metric(n, key);
    *fresh = m == NULL;
    if (m)
        return m;
    if (n->nmetrics == n->capmetrics) {
        kscope__pmetric *p = grow(t, n->metrics, n->nmetrics, &n->capmetrics, sizeof *p, 2);
        if (!p)
            return NULL;
        n->metrics = p;
    }
    m = &n->metrics[n->nmetrics++];
    memset(m, 0, sizeof *m);
    m->key = key;
    return m;
}

/* The metric `key` of n, added (type INT, value 0) when missing. */
static kscope__pmetric *metric_slot(kscope__ptree *t, kscope__pnode *n, const char *key, int *fresh)
{
    const char *k = kscope__ptree_intern_cstr(t, key);
    return k ? kscope__pnode_metric_slot(t, n, k, fresh) : NULL;
}

int kscope__pnode_put_number(kscope__ptree *t, kscope__pnode *n, const char *key,
                             kscope__vtype type, int64_t i, double d)
{
    int fresh;
    kscope__pmetric *m = kscope__pnode_metric_slot(t, n, key, &fresh);
    if (!m)
        return KSCOPE_ENOMEM;
    m->type = type;
    if (type == KSCOPE__V_INT)
        m->v.i = i;
    else
        m->v.d = d;
    return 0;
}

/* The setters of a number: key interned, then put. */
static int set_number(kscope__ptree *t, kscope__pnode *n, const char *key, kscope__vtype type,
                      int64_t i, double d)
{
    const char *k = kscope__ptree_intern_cstr(t, key);
    return k ? kscope__pnode_put_number(t, n, k, type, i, d) : KSCOPE_ENOMEM;
}

int kscope__pnode_set_int(kscope__ptree *t, kscope__pnode *n, const char *key, int64_t v)
{
    return set_number(t, n, key, KSCOPE__V_INT, v, 0);
}

int kscope__pnode_set_double(kscope__ptree *t, kscope__pnode *n, const char *key, double v)
{
    return set_number(t, n, key, KSCOPE__V_DOUBLE, 0, v);
}

int kscope__pnode_set_string(kscope__ptree *t, kscope__pnode *n, const char *key, const char *s)
{
    int fresh;
    kscope__pmetric *m = metric_slot(t, n, key, &fresh);
    const char *v = m ? kscope__ptree_intern_cstr(t, s) : NULL;
    if (!v)
        return KSCOPE_ENOMEM;
    m->type = KSCOPE__V_STRING;
    m->v.s = v;
    return 0;
}

int kscope__pmetric_put_vec(kscope__ptree *t, kscope__pmetric *m, kscope__vtype type,
                            const void *values, uint32_t count)
{
    size_t bytes = (size_t)count * (type == KSCOPE__V_INTVEC ? sizeof(int64_t) : sizeof(double));
    void *p = kscope__ptree_alloc(t, bytes + 1);
    if (!p)
        return KSCOPE_ENOMEM;
    if (count)
        memcpy(p, values, bytes);
    m->type = type;
    m->n = count;
    if (type == KSCOPE__V_INTVEC)
        m->v.iv = p;
    else
        m->v.dv = p;
    return 0;
}

int kscope__pnode_set_vec(kscope__ptree *t, kscope__pnode *n, const char *key, kscope__vtype type,
                          const void *values, uint32_t count)
{
    if (type != KSCOPE__V_INTVEC && type != KSCOPE__V_DOUBLEVEC)
        return KSCOPE_EINVAL;
    int fresh;
    kscope__pmetric *m = metric_slot(t, n, key, &fresh);
    return m ? kscope__pmetric_put_vec(t, m, type, values, count) : KSCOPE_ENOMEM;
}

double kscope__pmetric_number(const kscope__pmetric *m)
{
    if (!m)
        return 0;
    double sum = 0;
    switch (m->type) {
    case KSCOPE__V_INT:
        return (double)m->v.i;
    case KSCOPE__V_DOUBLE:
        return m->v.d;
    case KSCOPE__V_INTVEC:
        for (uint32_t i = 0; i < m->n; i++)
            sum += (double)m->v.iv[i];
        return sum;
    case KSCOPE__V_DOUBLEVEC:
        for (uint32_t i = 0; i < m->n; i++)
            sum += m->v.dv[i];
        return sum;
    default:
        return 0;
    }
}

/* Add v to m as a double: v alone when m holds no number yet (fresh, or
 * a string), else m's number plus v. */
static void add_as_double(kscope__pmetric *m, int fresh, double v)
{
    double d = fresh || m->type == KSCOPE__V_STRING ? v : kscope__pmetric_number(m) + v;
    m->type = KSCOPE__V_DOUBLE;
    m->v.d = d;
}

int kscope__pnode_add_int(kscope__ptree *t, kscope__pnode *n, const char *key, int64_t v)
{
    int fresh;
    kscope__pmetric *m = metric_slot(t, n, key, &fresh);
    if (!m)
        return KSCOPE_ENOMEM;
    int64_t sum;
    if (fresh || m->type == KSCOPE__V_STRING) {
        m->type = KSCOPE__V_INT;
        m->v.i = v;
    } else if (m->type == KSCOPE__V_INT && !__builtin_add_overflow(m->v.i, v, &sum)) {
        m->v.i = sum;
    } else { /* past int64 (or not an integer): the sum goes on in floating point */
        add_as_double(m, 0, (double)v);
    }
    return 0;
}

int kscope__pnode_add_double(kscope__ptree *t, kscope__pnode *n, const char *key, double v)
{
    int fresh;
    kscope__pmetric *m = metric_slot(t, n, key, &fresh);
    if (!m)
        return KSCOPE_ENOMEM;
    add_as_double(m, fresh, v);
    return 0;
}

/* The interned copy of s in t, NULL when t holds none (nothing is added). */
static const char *find_interned(const kscope__ptree *t, const char *s)
{
    if (!t->strtab_cap)
        return NULL;
    uint32_t mask = t->strtab_cap - 1;
    for (uint32_t j = (uint32_t)hash_bytes(s, strlen(s)) & mask; t->strtab[j]; j = (j + 1) & mask)
        if (strcmp(t->strtab[j], s) == 0)
            return t->strtab[j];
    return NULL;
}

static void inclusive_put(const char **set, uint32_t cap, const char *k)
{
    uint32_t j = ptr_hash(k) & (cap - 1);
    while (set[j])
        j = (j + 1) & (cap - 1);
    set[j] = k;
}

/* Keep the inclusive names' set at most half full (a tree may roll up many
 * metrics, and each added name is looked up first). */
static int inclusive_set_room(kscope__ptree *t)
{
    if ((t->ninclusive + 1) * 2 <= t->inclusive_set_cap)
        return 0;
    uint32_t cap = t->inclusive_set_cap ? t->inclusive_set_cap * 2 : 32;
    const char **set = kscope__ptree_alloc(t, cap * sizeof *set);
    if (!set)
        return KSCOPE_ENOMEM;
    for (uint32_t i = 0; i < t->ninclusive; i++)
        inclusive_put(set, cap, t->inclusive[i]);
    t->inclusive_set = set;
    t->inclusive_set_cap = cap;
    return 0;
}

int kscope__ptree_add_inclusive(kscope__ptree *t, const char *key)
{
    const char *k = kscope__ptree_intern_cstr(t, key);
    if (!k)
        return KSCOPE_ENOMEM;
    if (kscope__ptree_is_inclusive(t, k))
        return 0;
    if (inclusive_set_room(t) != 0)
        return KSCOPE_ENOMEM;
    if (t->ninclusive == t->capinclusive) {
        const char **p = grow(t, t->inclusive, t->ninclusive, &t->capinclusive, sizeof *p, 4);
        if (!p)
            return KSCOPE_ENOMEM;
        t->inclusive = p;
    }
    t->inclusive[t->ninclusive++] = k;
    inclusive_put(t->inclusive_set, t->inclusive_set_cap, k);
    return 0;
}

int kscope__ptree_is_inclusive(const kscope__ptree *t, const char *key)
{
    const char *k = find_interned(t, key);
    if (!k || !t->inclusive_set_cap)
        return 0;
    uint32_t mask = t->inclusive_set_cap - 1;
    for (uint32_t j = ptr_hash(k) & mask; t->inclusive_set[j]; j = (j + 1) & mask)
        if (t->inclusive_set[j] == k)
            return 1;
    return 0;
}

void kscope__ptree_clear_inclusive(kscope__ptree *t)
{
    t->ninclusive = 0;
    if (t->inclusive_set_cap)
        memset(t->inclusive_set, 0, t->inclusive_set_cap * sizeof *t->inclusive_set);
}

kscope__pdevice *kscope__ptree_device(kscope__ptree *t, const char *type, uint32_t id)
{
    const char *ty = kscope__ptree_intern_cstr(t, type);
    if (!ty)
        return NULL;
    for (uint32_t i = 0; i < t->ndevices; i++)
        if (t->devices[i].type == ty && t->devices[i].id == id)
            return &t->devices[i];
    if (t->ndevices == t->capdevices) {
        kscope__pdevice *p = grow(t, t->devices, t->ndevices, &t->capdevices, sizeof *p, 4);
        if (!p)
            return NULL;
        t->devices = p;
    }
    kscope__pdevice *d = &t->devices[t->ndevices++];
    memset(d, 0, sizeof *d);
    d->type = ty;
    d->id = id;
    d->arch = kscope__ptree_intern_cstr(t, "");
    return d;
}

typedef struct walk_frame {
    const kscope__pnode *node;
    uint32_t next;
} walk_frame;

int kscope__ptree_walk(const kscope__ptree *t, void (*enter)(const kscope__pnode *, void *),
                       void (*leave)(const kscope__pnode *, void *), void *arg)
{
    size_t cap = 64, depth = 0;
    walk_frame *stack = malloc(cap * sizeof *stack);
    if (!stack)
        return KSCOPE_ENOMEM;
    enter(t->root, arg);
    stack[depth++] = (walk_frame){t->root, 0};
    while (depth) {
        walk_frame *f = &stack[depth - 1];
        if (f->next == f->node->nchildren) {
            if (leave)
                leave(f->node, arg);
            depth--;
            continue;
        }
        const kscope__pnode *c = f->node->children[f->next++];
        if (depth == cap) {
            walk_frame *p = realloc(stack, cap * 2 * sizeof *stack);
            if (!p) {
                free(stack);
                return KSCOPE_ENOMEM;
            }
            stack = p;
            cap *= 2;
        }
        enter(c, arg);
        stack[depth++] = (walk_frame){c, 0};
    }
    free(stack);
    return 0;
}

int kscope__ptree_device_first_of_type(const kscope__ptree *t, uint32_t i)
{
    for (uint32_t j = 0; j < i; j++)
        if (t->devices[j].type == t->devices[i].type)
            return 0;
    return 1;
}

uint32_t kscope__ptree_devices_of_type(const kscope__ptree *t, const char *type)
{
    uint32_t n = 0;
    for (uint32_t j = 0; j < t->ndevices; j++)
        n += t->devices[j].type == type;
    return n;
}
