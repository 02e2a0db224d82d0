# The platform image: web (gunicorn), Celery worker, beat and the notebook proxy all run from it.
#   docker build -t myapp .
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    MYAPP_HOME=/data

WORKDIR /app

# The package finds migrations/, job-templates/ and templates/ beside itself (paths relative
# to the source tree), so the tree lives at /app and is installed in editable mode.
# Only what the platform needs is copied: no .venv, instance/ or tests in the image.
COPY setup.py ./
COPY myapp ./myapp
COPY migrations ./migrations
COPY job-templates ./job-templates
COPY templates ./templates
# bubblewrap: the local backend runs each job replica sealed off (docs/backends-local.md); inside a
# container it also needs user namespaces, else local jobs are refused with the reason at start.
RUN apt-get update \
    && apt-get install -y --no-install-recommends bubblewrap \
    && rm -rf /var/lib/apt/lists/*
# Extras: JupyterLab for local notebooks, the model servers' libraries for local serving.
RUN pip install -e ".[notebook,serving]" \
    && groupadd --system --gid 10001 myapp \
    && useradd --system --uid 10001 --gid myapp --home-dir /data --no-create-home \
        --shell /usr/sbin/nologin myapp \
    && mkdir -p /data \
    && chown myapp:myapp /data

# Numeric user, so Kubernetes' runAsNonRoot can verify it.
USER 10001:10001
VOLUME ["/data"]
EXPOSE 8080 8081

# myapp/web/gunicorn_conf.py: gthread workers with MYAPP_WEB_THREADS (128) threads each, for event streams.
CMD ["gunicorn", "-c", "python:myapp.web.gunicorn_conf", "--bind", "0.0.0.0:8080", "--workers", "4", "myapp.wsgi:app"]
