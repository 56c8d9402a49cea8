# tablebench in a container: a static binary on an empty base image.
# By default it serves the engine as a Table endpoint on port 10002; any
# other command line runs that command (run, figures, ...).
#
#   docker build -t tablebench .
#   docker run --rm -p 10002:10002 tablebench
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o /out/tablebench ./cmd/tablebench

FROM scratch
# Runs against a real account need the CA certificates.
COPY --from=build /etc/ssl/certs/ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
COPY --from=build /out/tablebench /tablebench
USER 65532:65532
EXPOSE 10002
ENTRYPOINT ["/tablebench"]
# Inside a container the port must be open to all interfaces; publish it
# only where a writable endpoint with the public development key is fine,
# or give a key of your own with --account-key-env.
CMD ["serve", "--addr", "0.0.0.0:10002", "--allow-insecure-network"]
