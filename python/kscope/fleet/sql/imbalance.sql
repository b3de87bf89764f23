-- imbalance.sql - per scope, how unevenly the ranks spend time in it: the
-- largest rank's time over the mean (1 is perfect balance), and which
-- ranks are slowest and fastest (the lowest rank among equals). Largest
-- imbalance first.
WITH ranked AS (
    SELECT s.scope, s.rank, s.time_ns,
           ROW_NUMBER() OVER (PARTITION BY s.scope ORDER BY s.time_ns DESC, s.rank) AS hi,
           ROW_NUMBER() OVER (PARTITION BY s.scope ORDER BY s.time_ns ASC, s.rank) AS lo
    FROM scope_times s JOIN scope_stats g ON s.scope = g.scope
)
SELECT scope,
       MAX(time_ns) / AVG(time_ns) AS max_over_mean,
       MAX(CASE WHEN hi = 1 THEN rank END) AS max_rank,
       MAX(CASE WHEN lo = 1 THEN rank END) AS min_rank,
       MAX(time_ns) AS max_ns, AVG(time_ns) AS mean_ns, MIN(time_ns) AS min_ns,
       COUNT(*) AS ranks
FROM ranked
GROUP BY scope
ORDER BY max_over_mean DESC, scope
LIMIT ${limit}
