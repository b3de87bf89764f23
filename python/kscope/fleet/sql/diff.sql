-- diff.sql - two runs (views a_* and b_*) side by side, per scope (the
-- metric ${metric}) and per kernel (${kernel_time}): the mean per rank in each,
-- so runs on different numbers of ranks compare; largest change first.
WITH a_ranks AS (SELECT COUNT(DISTINCT rank) AS n FROM a_nodes),
b_ranks AS (SELECT COUNT(DISTINCT rank) AS n FROM b_nodes),
a AS (
    SELECT 'scope' AS what, path AS name, SUM(${metric}) / MAX(r.n) AS ns
    FROM a_nodes CROSS JOIN a_ranks r WHERE kind = 'scope' AND ${metric} IS NOT NULL GROUP BY path
    UNION ALL
    SELECT 'kernel' AS what, name, SUM(${kernel_time}) / MAX(r.n) AS ns
    FROM a_nodes CROSS JOIN a_ranks r WHERE kind = 'kernel' AND ${kernel_time} IS NOT NULL GROUP BY name
),
b AS (
    SELECT 'scope' AS what, path AS name, SUM(${metric}) / MAX(r.n) AS ns
    FROM b_nodes CROSS JOIN b_ranks r WHERE kind = 'scope' AND ${metric} IS NOT NULL GROUP BY path
    UNION ALL
    SELECT 'kernel' AS what, name, SUM(${kernel_time}) / MAX(r.n) AS ns
    FROM b_nodes CROSS JOIN b_ranks r WHERE kind = 'kernel' AND ${kernel_time} IS NOT NULL GROUP BY name
),
joined AS (
    SELECT COALESCE(a.what, b.what) AS what, COALESCE(a.name, b.name) AS name,
           COALESCE(a.ns, 0) AS a_ns, COALESCE(b.ns, 0) AS b_ns
    FROM a FULL OUTER JOIN b ON a.what = b.what AND a.name = b.name
)
SELECT what, name, a_ns, b_ns, b_ns - a_ns AS delta_ns, b_ns / NULLIF(a_ns, 0) AS ratio
FROM joined
WHERE a_ns <> b_ns
ORDER BY ABS(b_ns - a_ns) DESC, what, name
LIMIT ${limit}
