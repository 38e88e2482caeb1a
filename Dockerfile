# syntax=docker/dockerfile:1.7
# fleetglass: one build stage, one distroless non-root runtime stage.
#
# The dependency cache is BuildKit cache mounts (the cargo registry and target/), not a stub
# crate, so there is no list of targets here to keep in step with Cargo.toml. target/ is a
# cache mount and never part of the layer, so the binary is copied out of it in the same RUN.
# tests/dockerfile.rs replays this stage without a container engine.
FROM rust:1.95-slim-bookworm AS build
WORKDIR /src
COPY Cargo.toml Cargo.lock build.rs ./
# The query macros compile against .sqlx/ (SQLX_OFFLINE in .cargo/config.toml): no database.
COPY .cargo .cargo
COPY .sqlx .sqlx
COPY server server
COPY templates templates
COPY static static
COPY migrations migrations
COPY benches benches
RUN --mount=type=cache,target=/usr/local/cargo/registry \
    --mount=type=cache,target=/src/target \
    cargo build --release --locked --bin fleetglass \
 && cp target/release/fleetglass /usr/local/bin/fleetglass

FROM gcr.io/distroless/cc-debian12:nonroot
ARG VERSION=0.1.0
ARG REVISION=unknown
LABEL org.opencontainers.image.title="fleetglass" \
      org.opencontainers.image.description="A truthful status board for Flux fleets" \
      org.opencontainers.image.source="https://github.com/fleetglass/fleetglass" \
      org.opencontainers.image.licenses="Apache-2.0" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}"
COPY --from=build /usr/local/bin/fleetglass /usr/local/bin/fleetglass
USER nonroot:nonroot
EXPOSE 8080
ENTRYPOINT ["/usr/local/bin/fleetglass"]
CMD ["serve", "--listen", "0.0.0.0:8080"]
