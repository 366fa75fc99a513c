"""`python -m arignote`: the installation report of `arignote.check_install()`; exits
with status 1 when a required part (not the GPU or MPI backend) does not work."""

from __future__ import annotations

import sys

from arignote.install_check import check_install

if __name__ == "__main__":
    sys.exit(0 if check_install() else 1)
