"""Test-suite settings: the on-disk compile cache is off, so that every test compiles
what it tests (the cache's own tests turn it on, with a temporary compiledir), and the IR is
verified again after the graph pipeline (`check_ir`)."""

from arignote.configuration import config

config.compile_cache = False
config.check_ir = True
