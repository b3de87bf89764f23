-- diff.sql - two runs (views a_* and b_*) side by side, per scope (the
-- metric ${metric}) and per kernel (${kernel_time}): the mean per rank in each,
-- so runs on different numbers of ranks compare; largest change first.
-- Both runs' nodes are read as one table with a column `side` ('a' or 'b'),
-- so that the means are defined once for both.
WITH nodes AS (
    SELECT 'a' AS side, kind, path, name, rank, ${metric} AS metric, ${kernel_time} AS kernel_time
    FROM a_nodes
    UNION ALL
    SELECT 'b' AS side, kind, path, name, rank, ${metric} AS metric, ${kernel_time} AS kernel_time
    FROM b_nodes
),
ranks AS (SELECT side, COUNT(DISTINCT rank) AS n FROM nodes GROUP BY side),
means AS (
    SELECT side, 'scope' AS what, path AS name, SUM(metric) / MAX(r.n) AS ns
    FROM nodes JOIN ranks r USING (side) WHERE kind = 'scope' AND metric IS NOT NULL
    GROUP BY side, path
    UNION ALL
    SELECT side, 'kernel' AS what, name, SUM(kernel_time) / MAX(r.n) AS ns
    FROM nodes JOIN ranks r USING (side) WHERE kind = 'kernel' AND kernel_time IS NOT NULL
    GROUP BY side, name
),
a AS (SELECT what, name, ns FROM means WHERE side = 'a'),
b AS (SELECT what, name, ns FROM means WHERE side = 'b'),
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
