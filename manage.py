#!/usr/bin/env python
"""Django's command-line utility."""

import os
import sys


def main() -> None:
    """Run a management command."""
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryproject.settings")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from django.core.management import execute_from_command_line

    execute_from_command_line(sys.argv)


if __name__ == "__main__":
    main()
