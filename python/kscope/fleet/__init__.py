"""kscope.fleet - many ranks' profiles as one Parquet dataset, analysed with
DuckDB (embedded, the default) or Spark (a cluster, or local mode).

    kscope fleet export -o DIR PROFILE...     # trees, traces, msgpack; ours and Proton's
    kscope fleet summary DIR [--json]         # ranks, stragglers, imbalance, top kernels, comm
    kscope fleet diff DIR_A DIR_B             # two runs, per scope and kernel
    kscope fleet sql DIR "SELECT ..."         # over the views nodes, kernels, runs
    kscope fleet report --html OUT DIR        # the fleet page (also: kscope report --html OUT DIR)

The analyses are the SQL files of sql/, run unchanged by both engines.
Needs `pip install 'kscope[fleet]'` (DuckDB, PyArrow, NumPy, msgpack);
`kscope[spark]` adds pyspark (Java 17 or later). docs/fleet.md is the
guide and the schema.

From Python: kscope.fleet.export.export(inputs, out), and the analyses of
kscope.fleet.analyses with an engine from kscope.fleet.engines.make(). This
module imports nothing beyond the standard library, so that a missing
engine is named when a command needs it.
"""
