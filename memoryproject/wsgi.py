"""WSGI entry point, for servers that speak WSGI."""

import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryproject.settings")

application = get_wsgi_application()
