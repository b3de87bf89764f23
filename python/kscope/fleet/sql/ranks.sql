-- ranks.sql - the ranks of the run, from the runs table.
SELECT DISTINCT rank FROM runs ORDER BY rank
