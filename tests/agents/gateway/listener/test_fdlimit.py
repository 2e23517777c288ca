"""A listener holds a socket per agent: it raises its open-files limit to the hard limit."""

from __future__ import annotations

import resource

from agents.gateway.listener.fdlimit import open_files_raise


def test_the_soft_open_files_limit_is_raised_to_the_hard_one():
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (256, hard))  # as a platform starts a process (1,024 or so)
    try:
        assert open_files_raise() == hard
        assert resource.getrlimit(resource.RLIMIT_NOFILE) == (hard, hard)
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
