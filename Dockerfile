# The service's image: the web process and the worker run from it (compose.yaml, or any orchestrator).
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1 MODEL_CACHE_DIR=/app/var/models
WORKDIR /app

COPY requirements.txt ./
RUN pip install --no-cache-dir -r requirements.txt

COPY . .
# The offline model's ONNX export, made once at build time rather than at each container's first start.
RUN DATABASE_URL=postgresql://unused/unused python -c "import django; django.setup(); \
from memories.llm import get_embedder; get_embedder().embed(['warm up'])" \
    && useradd --create-home --uid 1000 memories && chown -R memories /app/var
ENV DJANGO_SETTINGS_MODULE=memoryproject.settings
USER memories

EXPOSE 8000
CMD ["gunicorn", "--config", "memoryproject/gunicorn.conf.py"]
