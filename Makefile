# Thin targets; the commands are the documentation.
GO ?= go
STATICCHECK ?= $(shell $(GO) env GOPATH)/bin/staticcheck

.PHONY: build test bench lint generate e2e

build:
	$(GO) build -o bin/workforce .

test:
	$(GO) vet ./...
	$(GO) test -race ./...

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...

lint:
	test -z "$$(gofmt -l .)" || { gofmt -l .; exit 1; }
	$(GO) vet ./...
	$(STATICCHECK) ./...

generate:
	$(GO) generate ./...

# Opt-in: installs the pinned real harnesses (e2e/versions.json) from the npm
# registry and checks discovery and run against them. See docs/e2e.md.
e2e:
	$(GO) test -tags e2e -count=1 -timeout 30m -v ./e2e/
