# fleetglass: multi-stage build. Dependencies are compiled in their own layer so a source change
# rebuilds only the crate; the runtime image holds one static-ish binary and runs as non-root.
FROM rust:1.95-slim-bookworm AS build
WORKDIR /src
COPY Cargo.toml Cargo.lock ./
RUN mkdir -p server benches \
 && echo 'fn main() {}' > server/main.rs && echo '' > server/lib.rs && echo 'fn main() {}' > benches/engine.rs \
 && cargo build --release --locked \
 && rm -rf server benches
COPY server server
COPY templates templates
COPY static static
COPY migrations migrations
COPY benches benches
RUN touch server/main.rs server/lib.rs && cargo build --release --locked --bin fleetglass

FROM gcr.io/distroless/cc-debian12:nonroot
COPY --from=build /src/target/release/fleetglass /usr/local/bin/fleetglass
USER nonroot:nonroot
EXPOSE 8080
ENTRYPOINT ["/usr/local/bin/fleetglass"]
CMD ["serve", "--listen", "0.0.0.0:8080"]
