# Strata's image: one static binary that runs every role (`strata standalone`,
# `strata run coordinator|querynode|datanode`). Build: docker build -t strata .
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -o /out/strata ./cmd/strata

FROM debian:bookworm-slim
COPY --from=build /out/strata /usr/local/bin/strata
EXPOSE 19530 19531 9091
ENTRYPOINT ["strata"]
CMD ["standalone", "--data-dir", "/var/lib/strata"]
