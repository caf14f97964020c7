# Thin targets; the commands are the documentation.
GO ?= go
STATICCHECK ?= $(shell $(GO) env GOPATH)/bin/staticcheck

.PHONY: build test bench lint generate e2e

# The release build, also what the benchmarks measure: a static binary
# (workforce needs no cgo, and without the dynamic loader every command
# starts about 2 ms sooner) without urfave/cli's man page and markdown
# generator, which workforce does not use and whose package initialisation
# costs about 1 ms per command.
# -buildvcs=auto stamps the commit --version prints, whatever GOFLAGS says.
BUILDFLAGS ?= -trimpath -buildvcs=auto -tags urfave_cli_no_docs
OUT ?= bin/workforce

# The launcher (cmd/workforce-launcher) goes beside workforce, which
# executes it for every confined start: built together, they are of the
# same build, which workforce checks before it uses it.
build:
	CGO_ENABLED=0 $(GO) build $(BUILDFLAGS) -o $(OUT) .
	CGO_ENABLED=0 $(GO) build $(BUILDFLAGS) -o $(dir $(OUT))workforce-launcher ./cmd/workforce-launcher

# -timeout: the root package's scripts take 3 to 5 minutes under -race on
# two busy cores, near go test's default of 10.
test:
	$(GO) vet ./...
	$(GO) test -race -timeout 20m ./...

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
