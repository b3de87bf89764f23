"""engines.py - the two engines that run the analyses' SQL over a dataset:
DuckDB, embedded (the default), and Spark (a pyspark session: local mode,
or a cluster's when run under spark-submit or given --master).

Both see the same views: `nodes`, `kernels` and `runs` (for two datasets,
`a_nodes`, `b_nodes`, ...), with run and rank read from the partition
folders (rank as BIGINT), restricted to one run when one is chosen; a
table without files is an empty view of its fixed columns. The analyses'
intermediate results (`define`) are materialised once: a temporary table
in DuckDB, a cached view in Spark.
"""
import json
import os
import string
from importlib import resources

from . import dataset
from .profiles import InputError, shown


class QueryError(Exception):
    """The engine refused or failed a query: one line, exit status 2."""


def sql_text(name, **params):
    """The analysis `name` (sql/NAME.sql, shipped in the package) with its
    ${...} parameters filled in (callers pass checked identifiers and
    numbers only)."""
    text = resources.files(__package__).joinpath("sql", name + ".sql").read_text(encoding="utf-8")
    return string.Template(text).substitute(params)


def literal(text):
    return "'" + str(text).replace("'", "''") + "'"


def _one_line(e):
    msg = str(e).strip().splitlines()
    return shown(msg[0] if msg else type(e).__name__)


class Engine:
    name = "?"
    types = {}

    def _empty(self, table):
        cols = [f"CAST(NULL AS {self.types[t]}) AS {c}" for c, t in dataset.FIXED[table]]
        cols += [f"CAST(NULL AS {self.types['string']}) AS run", f"CAST(NULL AS {self.types['int64']}) AS rank"]
        return "SELECT " + ", ".join(cols) + " WHERE 1 = 0"

    def open(self, root, prefix="", run=None):
        """Views over the dataset at root: PREFIXnodes, PREFIXkernels,
        PREFIXruns (only run's rows when run is given)."""
        for t in dataset.TABLES:
            self._view(prefix + t, root, t, run)

    def query(self, sql):
        """(column names, rows as tuples)."""
        raise NotImplementedError

    def columns(self, view):
        return self.query(f"SELECT * FROM {view} LIMIT 0")[0]

    def close(self):
        pass


class DuckDB(Engine):
    name = "duckdb"
    types = {"int64": "BIGINT", "int32": "INTEGER", "string": "VARCHAR", "bool": "BOOLEAN",
             "double": "DOUBLE"}

    def __init__(self, memory_limit=None, threads=None):
        try:
            import duckdb
        except ImportError:
            raise InputError("the duckdb engine is not installed: pip install 'kscope[fleet]'") from None
        self.duckdb = duckdb
        self.con = duckdb.connect(":memory:")
        self.con.execute("SET preserve_insertion_order = false")
        # each query binds the views again: keep the files' footers
        self.con.execute("SET parquet_metadata_cache = true")
        if memory_limit:
            self.con.execute(f"SET memory_limit = {literal(memory_limit)}")
        if threads:
            self.con.execute(f"SET threads = {int(threads)}")

    def _view(self, view, root, table, run):
        where = f" WHERE run = {literal(run)}" if run else ""
        if dataset.is_remote(root) or dataset.table_files(root, table):
            pattern = os.path.join(root, table, "run=*", "rank=*", "*.parquet")
            src = (f"read_parquet({literal(pattern)}, hive_partitioning = true, union_by_name = true, "
                   "hive_types = {'run': VARCHAR, 'rank': BIGINT})")
            self._run(f"CREATE OR REPLACE VIEW {view} AS SELECT * FROM {src}{where}")
        else:
            self._run(f"CREATE OR REPLACE VIEW {view} AS {self._empty(table)}")

    def _run(self, sql):
        try:
            return self.con.execute(sql)
        except self.duckdb.Error as e:
            raise QueryError(_one_line(e)) from None

    def define(self, name, sql):
        self._run(f"CREATE OR REPLACE TEMP TABLE {name} AS {sql}")

    def query(self, sql):
        cur = self._run(sql)
        if cur.description is None:
            return [], []
        return [d[0] for d in cur.description], [tuple(r) for r in cur.fetchall()]

    def close(self):
        self.con.close()


class Spark(Engine):
    name = "spark"
    types = {"int64": "BIGINT", "int32": "INT", "string": "STRING", "bool": "BOOLEAN",
             "double": "DOUBLE"}

    def __init__(self, master=None):
        try:
            from pyspark.sql import SparkSession, functions
        except ImportError:
            raise InputError("the spark engine is not installed: pip install 'kscope[spark]' "
                             "(and Java 17 or later)") from None
        self.F = functions
        builder = SparkSession.builder.appName("kscope fleet").config(
            "spark.ui.showConsoleProgress", "false")
        master = master or os.environ.get("KSCOPE_SPARK_MASTER")
        if master:
            builder = builder.master(master)
        try:
            self.spark = builder.getOrCreate()
        except Exception as e:  # no Java, or a master that cannot be reached
            raise InputError(f"cannot start Spark (it needs Java 17 or later: JAVA_HOME or java on "
                             f"PATH): {_one_line(e)}") from None
        self.spark.sparkContext.setLogLevel("ERROR")
        conf = self.spark.conf
        if self.spark.sparkContext.master.startswith("local"):
            conf.set("spark.sql.shuffle.partitions", str(2 * (os.cpu_count() or 1)))
            # list the partition folders in the driver: a job per listing
            # costs more than the listing on one machine
            conf.set("spark.sql.sources.parallelPartitionDiscovery.threshold", "1000000")
        self.cached = []

    def _marker(self, root):
        """The dataset's marker, read through Spark where the dataset is
        remote (any file system Spark reaches)."""
        if not dataset.is_remote(root):
            return dataset.read_marker(root)
        try:
            text = self.spark.read.text(root.rstrip("/") + "/" + dataset.MARKER, wholetext=True).first()
            return json.loads(text[0]) if text else {}
        except Exception as e:
            raise InputError(f"{shown(root)}: not a kscope fleet dataset: {_one_line(e)}") from None

    def _schema(self, table, marker):
        """The table's columns as a DDL string: reading with it spares Spark
        merging the schemas of every file (a job over all of them)."""
        cols = list(dataset.FIXED[table])
        if table == "nodes":
            cols += [(c, t) for c, (_m, t, _i) in sorted(dataset.marker_columns(marker).items())]
        ddl = {**self.types, "list": "ARRAY<DOUBLE>"}
        return ", ".join(f"`{c}` {ddl[t]}" for c, t in cols + [("run", "string"), ("rank", "int64")])

    def open(self, root, prefix="", run=None):
        marker = self._marker(root)
        for t in dataset.TABLES:
            self._view(prefix + t, root, t, run, marker)

    def _view(self, view, root, table, run, marker):
        path = (root if dataset.is_remote(root) else os.path.abspath(root)).rstrip("/") + "/" + table
        df = None
        if dataset.is_remote(root) or dataset.table_files(root, table):
            try:
                df = self.spark.read.schema(self._schema(table, marker)).parquet(path)
            except Exception as e:
                if not dataset.is_remote(root):
                    raise QueryError(_one_line(e)) from None
        if df is None:
            self.spark.sql(self._empty(table)).createOrReplaceTempView(view)
            return
        if run:
            df = df.where(self.F.col("run") == run)
        df.createOrReplaceTempView(view)

    def define(self, name, sql):
        try:
            df = self.spark.sql(sql).cache()
        except Exception as e:
            raise QueryError(_one_line(e)) from None
        df.createOrReplaceTempView(name)
        self.cached.append(df)

    def query(self, sql):
        try:
            df = self.spark.sql(sql)
            rows = df.collect()
        except Exception as e:
            raise QueryError(_one_line(e)) from None
        return list(df.columns), [tuple(r) for r in rows]

    def close(self):
        for df in self.cached:
            df.unpersist()
        for name in [t.name for t in self.spark.catalog.listTables() if t.isTemporary]:
            self.spark.catalog.dropTempView(name)


def make(name, master=None, memory_limit=None, threads=None):
    """The engine called `name` ("duckdb" or "spark")."""
    if name == "duckdb":
        return DuckDB(memory_limit=memory_limit, threads=threads)
    if name == "spark":
        return Spark(master=master)
    raise InputError(f"--engine {shown(name)}: use duckdb or spark")
