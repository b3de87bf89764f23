-- stragglers.sql - ranks whose time in a scope exceeds the scope's median
-- over the ranks by a robust margin: more than ${min_excess} above it, and
-- more than ${mad_k} scaled median absolute deviations (1.4826 * MAD, the
-- standard deviation's robust estimate) above it. One row per rank: the
-- scope where it is worst, and in how many scopes it straggles. Worst
-- (largest ratio to the median) first.
WITH slow AS (
    SELECT s.rank, s.scope, s.time_ns, g.median_ns, s.time_ns / g.median_ns AS ratio
    FROM scope_times s JOIN scope_stats g ON s.scope = g.scope
    WHERE g.median_ns > 0
      AND s.time_ns > g.median_ns * (1 + ${min_excess})
      AND s.time_ns > g.median_ns + ${mad_k} * 1.4826 * g.mad_ns
),
ranked AS (
    SELECT rank, scope, time_ns, median_ns, ratio,
           ROW_NUMBER() OVER (PARTITION BY rank ORDER BY ratio DESC, time_ns DESC, scope) AS worst,
           COUNT(*) OVER (PARTITION BY rank) AS scopes
    FROM slow
)
SELECT rank, scope, time_ns, median_ns, ratio, scopes
FROM ranked
WHERE worst = 1
ORDER BY ratio DESC, time_ns DESC, rank
LIMIT ${limit}
