"""submit.py - the file to hand spark-submit: a fleet command run by the
cluster's Spark (docs/fleet.md has the example):

    spark-submit --master spark://HOST:7077 "$(python -m kscope.fleet.submit --path)" \\
        summary hdfs:///profiles/train.fleet --json

It takes the same arguments as `kscope fleet` and adds --engine spark to
the commands that take one. Only the driver runs Python: the analyses are
SQL, so the executors need no kscope package, only the dataset's path.
"""
import os
import sys

if __package__ in (None, ""):  # run as a file (spark-submit): import the package by name
    from kscope.fleet.cli import main
else:
    from .cli import main

ENGINE_COMMANDS = ("summary", "diff", "sql", "report")


def spark_argv(argv):
    """argv with --engine spark added where the command takes an engine
    and none was named."""
    if argv and argv[0] in ENGINE_COMMANDS and not any(a == "--engine" or a.startswith("--engine=")
                                                       for a in argv):
        return argv[:1] + ["--engine", "spark"] + argv[1:]
    return list(argv)


if __name__ == "__main__":
    if sys.argv[1:] == ["--path"]:
        print(os.path.abspath(__file__))
        sys.exit(0)
    sys.exit(main(spark_argv(sys.argv[1:])))
