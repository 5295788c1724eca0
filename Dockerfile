# Builds the tocsin binary (API, worker, migrations) into a small image that
# runs as an unprivileged user. The compose stack starts it as tocsin-api
# (`serve --migrate`) and tocsin-worker (`worker`).

FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o /out/tocsin ./cmd/tocsin

# Alpine rather than distroless: busybox wget lets compose probe /readyz.
FROM alpine:3.22
RUN adduser -D -H -u 10001 tocsin
COPY --from=build /out/tocsin /tocsin
USER 10001:10001
EXPOSE 8080 9464
ENTRYPOINT ["/tocsin"]
CMD ["serve"]
