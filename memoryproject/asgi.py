"""ASGI entry point (served by uvicorn in ``manage.py serve``)."""

import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryproject.settings")

application = get_asgi_application()
