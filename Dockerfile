FROM python:3.11-slim
WORKDIR /app
COPY pyproject.toml README.md ./
COPY engram engram
COPY schemas schemas
COPY ingest ingest
COPY streams streams
COPY formation formation
COPY projections projections
COPY prompts prompts
COPY migrations migrations
COPY examples examples
RUN pip install --no-cache-dir .
ENV ENGRAM_STATE_DIR=/tmp/engram-state
USER nobody
