"""WSGI entry point: ``application``, served by gunicorn (``memoryproject/gunicorn.conf.py``) or any WSGI server."""

import os

from django.core.wsgi import get_wsgi_application

__all__ = ["application"]

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryproject.settings")

application = get_wsgi_application()
