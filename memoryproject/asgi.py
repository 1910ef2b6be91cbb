"""ASGI entry point (served by uvicorn in ``manage.py serve``).

Every view of this service is synchronous (the ORM, the embedding model). Django's own ASGI
handler runs such a view with the middleware adapted one by one: each of the nine middleware
hops between the event loop and a thread for its request and response halves, fifteen hops
per request, and each request gets a new thread. Here Django's WSGI handler runs instead,
behind a2wsgi (the adapter uvicorn itself recommends for WSGI apps): the whole request runs
in one thread of a fixed pool of ``WEB_THREADS``, one hop per request. A trivial GraphQL
request took a median 6.2-7.7 ms through Django's ASGI handler and 3.7-4.0 ms this way, in
the same process (README, *Benchmarks*).
"""

import os

from a2wsgi import WSGIMiddleware
from django.conf import settings
from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryproject.settings")

application = WSGIMiddleware(get_wsgi_application(), workers=settings.WEB_THREADS)
