FROM python:3.11-slim
WORKDIR /app
# The runtime lock first (every distribution pinned, hashes required), then the project alone.
COPY requirements/runtime.lock requirements/runtime.lock
RUN pip install --no-cache-dir --require-hashes -r requirements/runtime.lock
COPY pyproject.toml README.md ./
COPY engram engram
COPY schemas schemas
COPY ingest ingest
COPY streams streams
COPY projections projections
COPY prompts prompts
COPY migrations migrations
COPY examples examples
RUN pip install --no-cache-dir --no-deps .
ENV ENGRAM_STATE_DIR=/tmp/engram-state
# The log is encrypted by default: the worker, the API and every door refuse to start without a
# key-encryption key. Mount it as this secret (compose.yaml does), or set ENGRAM_KEYS_KEK.
ENV ENGRAM_KEYS_KEK_FILE=/run/secrets/engram_kek
USER nobody
