/*
 * hatchet-build.h - the state of the .hatchet tree builder, shared by its
 * two halves: hatchet-build.c turns parse events into a ptree, and
 * hatchet-json-read.c is yajl's parser feeding it those events (the
 * MessagePack reader feeds it through kscope__hjson_events alone).
 */
#ifndef KSCOPE_HATCHET_BUILD_H
#define KSCOPE_HATCHET_BUILD_H

#include "read/yajl-in.h"

/* What the value being parsed at one nesting level is. */
typedef enum {
    ST_TOP,      /* the outer array */
    ST_NODE,     /* a node object */
    ST_FRAME,    /* a node's "frame" object */
    ST_METRICS,  /* a node's "metrics" object */
    ST_VEC,      /* a vector metric's array */
    ST_CHILDREN, /* a node's "children" array */
    ST_DEVINFO,  /* the device-info object */
    ST_DEVTYPE,  /* {"0": {...}} under a device type */
    ST_DEVICE,   /* one device's fields */
    ST_ASIDE,    /* ROOT's "kscope" object (format/hatchet-root.h) */
    ST_INCLIST,  /* its "inclusive" array of metric names */
    ST_SKIP,     /* an unknown value being skipped */
} hstate;

/* The key just read in an object, deciding what its value means. */
typedef enum {
    K_NONE,
    K_FRAME,
    K_METRICS,
    K_CHILDREN,
    K_NAME,
    K_TYPE,
    K_ASIDE,     /* ROOT's "kscope" */
    K_INCLUSIVE, /* "inclusive" in it */
    K_OTHER,
} hkey;

typedef struct hlevel {
    hstate st;
    hkey key;
    kscope__pnode *node;  /* ST_NODE / ST_FRAME / ST_METRICS / ST_CHILDREN */
    kscope__pdevice *dev; /* ST_DEVICE */
} hlevel;

struct kscope__hjson {
    /* the JSON front end's parser (unused for MessagePack), the values
     * finished, and the first refusal of either encoding */
    kscope__yajl_in in;
    kscope__ptree *t;
    hlevel *stack;
    size_t depth, cap;
    size_t tree_depth; /* node objects open */
    size_t top_index;  /* elements seen in the outer array */
    int seen_devinfo;
    int listed_inclusive; /* ROOT named every inclusive metric */
    int done;             /* the outer array closed */
    const char *mkey;     /* pending metric key (interned) */
    const char *devtype;  /* pending device type (interned) */
    uint32_t devid;       /* pending device index */
    /* the pending device field's key, copied: the parser reuses its buffer
     * before the value arrives (longer keys are not fields we read) */
    char devfield[24];
    size_t devfield_len;
    const char *empty; /* interned "" */
    /* metric keys seen so far: a file has a handful, so a short list beats
     * hashing every key again */
    const char *keys[32];
    size_t keylen[32];
    int nkeys;
    /* vector metric being read */
    double *vec;
    size_t nvec, capvec;
    int vec_all_int;
    kscope__demangler names; /* frame names as read */
};

/* The builder's part of kscope__hjson_new and _free: the tree being built
 * and the builder's own buffers. init returns 0 or KSCOPE_ENOMEM. */
int kscope__hbuild_init(kscope__hjson *p);
void kscope__hbuild_release(kscope__hjson *p);

#endif
