/*
 * util.c - the growable array of util.h: one place that doubles, checks
 * the size for overflow and leaves the array whole when memory runs out.
 */
#include "util/util.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int kscope__room(void *slot, size_t *cap, size_t need, size_t size, size_t first)
{
    void *items;
    memcpy(&items, slot, sizeof items); /* any object pointer, through void * */
    if (need <= *cap && items)
        return 0;
    size_t n = *cap ? *cap : (first ? first : 1);
    while (n < need) {
        if (n > SIZE_MAX / 2)
            return -1;
        n *= 2;
    }
    if (size && n > SIZE_MAX / size)
        return -1;
    void *grown = realloc(items, n * size);
    if (!grown)
        return -1;
    memcpy(slot, &grown, sizeof grown);
    *cap = n;
    return 0;
}
