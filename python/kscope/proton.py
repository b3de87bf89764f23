"""proton.py - `python -m kscope.proton [options] script.py|pytest ARGS`:
the launcher (launcher.py) under Proton's module path, so that
`python -m triton.profiler.proton ...` becomes `python -m kscope.proton ...`
as `import triton.profiler as proton` becomes `import kscope as proton`.
Proton's options (-n, -b, -c, -m, -d, -k) mean what they mean there; -b
takes Proton's backend names, of which kscope records cupti (the others
are refused in one line). kscope's own options (--sample, -f, --include,
--exclude, --python-cpu) are there too.
"""
import sys

from .launcher import PROTON_BACKENDS, main

if __name__ == "__main__":
    sys.exit(main(prog="python -m kscope.proton", backends=PROTON_BACKENDS))
