-- top_kernels.sql - the kernels with the most GPU time over all ranks,
-- and how that time spreads across the ranks that ran them: per rank
-- mean, min and max (with their ranks), and max over mean.
WITH per_rank AS (
    SELECT rank, name, SUM(time_ns) AS time_ns, SUM(count) AS launches
    FROM nodes
    WHERE kind = 'kernel' AND time_ns IS NOT NULL
    GROUP BY rank, name
),
ranked AS (
    SELECT rank, name, time_ns, launches,
           ROW_NUMBER() OVER (PARTITION BY name ORDER BY time_ns DESC, rank) AS hi,
           ROW_NUMBER() OVER (PARTITION BY name ORDER BY time_ns ASC, rank) AS lo
    FROM per_rank
)
SELECT name AS kernel, SUM(time_ns) AS time_ns, SUM(launches) AS count, COUNT(*) AS ranks,
       AVG(time_ns) AS mean_ns, MIN(time_ns) AS min_ns, MAX(time_ns) AS max_ns,
       MAX(CASE WHEN hi = 1 THEN rank END) AS max_rank,
       MAX(CASE WHEN lo = 1 THEN rank END) AS min_rank,
       MAX(time_ns) / NULLIF(AVG(time_ns), 0) AS spread
FROM ranked
GROUP BY name
ORDER BY time_ns DESC, kernel
LIMIT ${limit}
