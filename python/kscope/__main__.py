"""`python -m kscope`: the launcher (see launcher.py)."""
import sys

from .launcher import main

sys.exit(main())
