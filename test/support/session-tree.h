/*
 * session-tree.h - a live session's calling-context tree in the C tests:
 * what kscope_data gives as .hatchet, parsed with yajl. Include after
 * cmocka.h, kscope.h and testutil.h. KSCOPE_TEST_PRINT=1 prints each tree
 * read on stderr (for debugging a test).
 */
#ifndef KSCOPE_SESSION_TREE_H
#define KSCOPE_SESSION_TREE_H

/* Session s's .hatchet document, parsed (the caller frees it with
 * yajl_tree_free). With text, *text gets the .hatchet text too (the caller
 * frees it with kscope_free). */
static inline yajl_val tu_session_doc(int s, char **text)
{
    char *buf;
    size_t len;
    assert_int_equal(kscope_data(s, "hatchet", &buf, &len), 0);
    if (getenv("KSCOPE_TEST_PRINT"))
        fprintf(stderr, "%s\n", buf);
    yajl_val doc = tu_parse(buf);
    if (text)
        *text = buf;
    else
        kscope_free(buf);
    assert_non_null(doc);
    return doc;
}

/* Session s's tree: ROOT, with the parsed document in *doc (the caller
 * frees it with yajl_tree_free). */
static inline yajl_val tu_session_tree(int s, yajl_val *doc)
{
    *doc = tu_session_doc(s, NULL);
    return (*doc)->u.array.values[0];
}

/* As tu_session_tree, and fails the test unless the document is the
 * two-element array [tree, device info]. */
static inline yajl_val tu_session_tree_checked(int s, yajl_val *doc)
{
    *doc = tu_session_doc(s, NULL);
    assert_true(YAJL_IS_ARRAY(*doc));
    assert_int_equal((*doc)->u.array.len, 2);
    return (*doc)->u.array.values[0];
}

#endif
