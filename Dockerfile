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
USER nobody
