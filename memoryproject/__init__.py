"""The Django project: settings, URLs, the WSGI app, gunicorn's configuration and the embedded PostgreSQL."""

# The name the worker's processes give PostgreSQL (libpq's PGAPPNAME, set by manage.py for qcluster):
# /readyz counts the connections under it to tell whether a worker runs.
WORKER_APPLICATION_NAME = "memories-worker"
