-- heatmap.sql - the fleet page's rank x scope heat map: the ${scopes}
-- scopes with the most mean time, and each rank's time in them. With more
-- than ${bins} ranks, ranks are put in ${bins} bins (by their order) and a
-- bin shows its slowest rank.
WITH top AS (
    SELECT scope, mean_ns FROM scope_stats ORDER BY mean_ns DESC, scope LIMIT ${scopes}
),
ordered AS (
    SELECT rank, DENSE_RANK() OVER (ORDER BY rank) - 1 AS pos FROM (SELECT DISTINCT rank FROM runs) r
),
count_ranks AS (
    SELECT COUNT(*) AS n FROM ordered
),
cells AS (
    SELECT s.scope, s.rank, s.time_ns, t.mean_ns,
           CAST(FLOOR(o.pos * LEAST(${bins}, c.n) / c.n) AS BIGINT) AS bin
    FROM scope_times s
    JOIN top t ON t.scope = s.scope
    JOIN ordered o ON o.rank = s.rank
    CROSS JOIN count_ranks c
),
ranked AS (
    SELECT scope, rank, time_ns, mean_ns, bin,
           ROW_NUMBER() OVER (PARTITION BY scope, bin ORDER BY time_ns DESC, rank) AS r
    FROM cells
)
SELECT scope, bin, rank, time_ns, mean_ns FROM ranked WHERE r = 1 ORDER BY mean_ns DESC, scope, bin
