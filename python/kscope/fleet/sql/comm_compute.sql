-- comm_compute.sql - per rank, GPU time in collective communication
-- (NCCL/RCCL kernels: the comm column) against the other kernels, from
-- the nodes; and, where the rank has a trace, how long communication ran
-- while computation ran too (overlap_ns): the intersection of the union of
-- its comm kernels' intervals with the union of its other kernels'.
WITH busy AS (
    SELECT rank,
           SUM(CASE WHEN comm THEN time_ns ELSE 0 END) AS comm_ns,
           SUM(CASE WHEN comm THEN 0 ELSE time_ns END) AS compute_ns
    FROM nodes
    WHERE kind = 'kernel' AND time_ns IS NOT NULL
    GROUP BY rank
),
spans AS (
    SELECT rank, comm, start_ns AS s, start_ns + duration_ns AS e
    FROM kernels
    WHERE kind = 'kernel'
),
marked AS (
    SELECT rank, comm, s, e,
           MAX(e) OVER (PARTITION BY rank, comm ORDER BY s, e
                        ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS reach
    FROM spans
),
islands AS (
    SELECT rank, comm, s, e,
           SUM(CASE WHEN reach IS NULL OR s > reach THEN 1 ELSE 0 END)
               OVER (PARTITION BY rank, comm ORDER BY s, e ROWS UNBOUNDED PRECEDING) AS island
    FROM marked
),
merged AS (
    SELECT rank, comm, MIN(s) AS s, MAX(e) AS e
    FROM islands
    GROUP BY rank, comm, island
),
overlap AS (
    SELECT c.rank, SUM(LEAST(c.e, k.e) - GREATEST(c.s, k.s)) AS overlap_ns
    FROM merged c JOIN merged k
      ON c.rank = k.rank AND c.comm AND NOT k.comm AND k.s < c.e AND c.s < k.e
    GROUP BY c.rank
),
traced AS (
    SELECT DISTINCT rank FROM kernels
)
SELECT b.rank, b.comm_ns, b.compute_ns,
       b.comm_ns / NULLIF(b.comm_ns + b.compute_ns, 0) AS comm_share,
       CASE WHEN t.rank IS NULL THEN NULL ELSE COALESCE(o.overlap_ns, 0) END AS overlap_ns
FROM busy b
LEFT JOIN traced t ON t.rank = b.rank
LEFT JOIN overlap o ON o.rank = b.rank
ORDER BY b.rank
