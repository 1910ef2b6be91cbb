"""Test settings: the base settings with django-q2 tasks run in-process.

``Q_CLUSTER`` is read once at import, so ``sync`` is switched here, not by a fixture.
"""

import os

from memoryproject.settings import *  # noqa: F403
from memoryproject.settings import Q_CLUSTER

Q_CLUSTER = {**Q_CLUSTER, "sync": True}
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
SUMMARY_IDLE_MINUTES = 30

# One throwaway database per test process, so concurrent runs on one server never collide.
DATABASES["default"]["TEST"] = {"NAME": f"test_memories_{os.getpid()}"}  # noqa: F405

# No pool in tests: each test's transaction lives on one connection (the pool is exercised by
# the speed benchmark's smoke test, which runs the real server).
DATABASES["default"]["OPTIONS"].pop("pool", None)  # noqa: F405
