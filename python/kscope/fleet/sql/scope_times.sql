-- scope_times.sql - each rank's time in each scope: the metric ${metric}
-- (by default time_ns_inc, the GPU time under the scope) summed over the
-- scope's nodes of that path. Materialised once; the analyses read it.
SELECT rank, path AS scope, SUM(${metric}) AS time_ns
FROM nodes
WHERE kind = 'scope' AND ${metric} IS NOT NULL
GROUP BY rank, path
