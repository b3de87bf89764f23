/*
 * fake-cupti.c - stands in for libcupti's cuptiSubscribe in the CUPTI
 * conflict test: returns $FAKE_CUPTI_RC (39: another subscriber holds it).
 */
#include <stdlib.h>

int cuptiSubscribe(void **subscriber, void *callback, void *userdata)
{
    (void)callback;
    (void)userdata;
    *subscriber = NULL;
    const char *rc = getenv("FAKE_CUPTI_RC");
    return rc ? atoi(rc) : 0;
}
