-- scope_stats.sql - the scopes worth comparing across ranks: present on
-- at least two ranks, with a mean time of at least ${min_share} of a
-- rank's mean total (the ${metric} of ROOT's children, summed). Per
-- scope: the ranks that have it, their mean, median and the median
-- absolute deviation from it (robust spread). Materialised once.
WITH totals AS (
    SELECT rank, SUM(${metric}) AS total_ns
    FROM nodes
    WHERE depth = 1 AND ${metric} IS NOT NULL
    GROUP BY rank
),
threshold AS (
    SELECT ${min_share} * AVG(total_ns) AS min_ns FROM totals
),
med AS (
    SELECT scope, COUNT(*) AS ranks, AVG(time_ns) AS mean_ns, MEDIAN(time_ns) AS median_ns
    FROM scope_times
    GROUP BY scope
),
kept AS (
    SELECT m.scope, m.ranks, m.mean_ns, m.median_ns
    FROM med m CROSS JOIN threshold t
    WHERE m.ranks >= 2 AND m.mean_ns > 0 AND m.mean_ns >= t.min_ns
)
SELECT k.scope, k.ranks, k.mean_ns, k.median_ns, MEDIAN(ABS(s.time_ns - k.median_ns)) AS mad_ns
FROM kept k JOIN scope_times s ON s.scope = k.scope
GROUP BY k.scope, k.ranks, k.mean_ns, k.median_ns
