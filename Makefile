# shellsup — `make help` lists the targets.
SHELL   := /bin/bash
GO      ?= go
BIN     := bin/shellsup
# The version is in the VERSION file, embedded in the binary (version.go).
LDFLAGS := -s -w
FUZZ_EXECS ?= 500000
# A login shell sources ~/.profile; the demo gets an empty HOME so it is fast.
DEMO_HOME := $(CURDIR)/bin/demo-home

.PHONY: help build test test-go test-tiers test-python stress bench soak demo wheel fuzz fuzz-python vet compare loc clean

help: ## list the targets
	@grep -hE '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-12s %s\n", $$1, $$2}'

build: ## build the static binary at bin/shellsup
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/shellsup

test: test-go test-tiers test-python ## run every test: Go (with -race), the integration suite per tier, the Python binding

test-go: build ## go vet, then go test -race ./... (real bash, real /proc)
	$(GO) vet ./...
	GOOS=darwin $(GO) vet ./...
	$(GO) test -race -count=1 ./...

# The integration suite again with each tier forced on every run (the plain
# run above gets the default: cgroup+subreaper as root, else subreaper).
TIERS ?= subreaper pidns

test-tiers: build ## the integration suite once per forced tier (TIERS="subreaper pidns")
	@for tier in $(TIERS); do echo "tier: $$tier"; \
	  SHELLSUP_TEST_TIER=$$tier $(GO) test -count=1 ./cmd/shellsup/ || exit 1; done

test-python: build ## the Python binding's pytest suite against bin/shellsup
	CGO_ENABLED=0 $(GO) build -trimpath -tags testseams -o bin/shellsup-testseams ./cmd/shellsup
	@py=$$(.ci/find-python) && echo "python: $$py" && \
	SHELLSUP_BIN=$(CURDIR)/$(BIN) SHELLSUP_TESTSEAMS_BIN=$(CURDIR)/bin/shellsup-testseams $$py -m pytest -q bindings/python/tests

# The race-prone tests: cancels racing timeouts and forks, parent deaths,
# signals, and the cleanup's own tests.
STRESS_RUN := TestReuse|TestAccomplices|TestConcurrentRunsNeverCross|TestCancelRace|TestFastForker|TestParent|TestSignalsToShellsupCancel|TestTimeoutWinsOverLaterExit|TestTermIgnorerKilledAtGrace|TestCleanup|TestOpenVerified|TestRunCancel|TestRunTimeout|TestHarnessKilled|TestProgressErrorCancels|TestSecondSignalSkipsTheGrace|TestSignalCancelExits128PlusN|TestPortsOfTheTree|TestHumanModeSlowReader|TestTimeoutExitTie|TestZombieLeader
STRESS_COUNT ?= 20

stress: build ## run the race-prone tests many times (STRESS_COUNT=20)
	$(GO) test -race -count=$(STRESS_COUNT) -run '$(STRESS_RUN)' ./cmd/shellsup/ ./reaper/ ./bindings/go/

bench: build ## a Markdown table of shellsup against its limits, target and ✔/✘ per row (baselines run side by side)
	@py=$$(.ci/find-python) && $(GO) run ./cmd/shellsup-bench --bin $(BIN) --python "$$py"
	@echo && $(GO) test -run '^$$' -bench . -benchtime 1x ./decoder/ | grep -E 'Benchmark|ok'

# The "why not" table of the README: one run, every tool side by side (tini and bwrap are
# skipped, and say so, where they are not installed; systemd-run needs a running systemd).
# The Python rows use the Python .ci/find-python finds (with msgpack, for the binding's row).
compare: build ## the same leak shapes under shellsup, timeout, tini, systemd-run, bwrap, subprocess and os/exec: a Markdown table
	@py=$$(.ci/find-python) && $(GO) run ./cmd/shellsup-compare --bin $(BIN) --python "$$py"

SOAK_RUNS ?= 1000
SOAK_TIERS ?= subreaper,cgroup,pidns

soak: build ## 32 shellsups at once (50 sleepers each), then SOAK_RUNS runs over every leak shape × ending × tier; fails on any leak or growth
	SHELLSUP_CONCURRENCY=32x50 $(GO) test -race -count=1 -run 'TestConcurrentRunsNeverCross' ./cmd/shellsup/
	$(GO) build -o bin/shellsup-soak ./cmd/shellsup-soak
	bin/shellsup-soak --bin $(BIN) --runs $(SOAK_RUNS) --tiers $(SOAK_TIERS)

demo: build ## run a command that leaves a setsid daemon, a background job and a TERM-ignorer behind
	@rm -rf $(DEMO_HOME) && mkdir -p $(DEMO_HOME)
	HOME=$(DEMO_HOME) $(BIN) --grace 1 -- '\
	  setsid sleep 300 & echo $$! >> ~/pids;                 \
	  sleep 300 & echo $$! >> ~/pids;                        \
	  (trap "" TERM; exec sleep 300) & echo $$! >> ~/pids;   \
	  echo "bash exits now, leaving a setsid daemon, a background job and a TERM-ignorer: $$(echo $$(cat ~/pids))"'
	@for p in $$(cat $(DEMO_HOME)/pids); do \
	  if kill -0 $$p 2>/dev/null; then echo "pid $$p is still alive"; exit 1; fi; done; \
	  echo "after shellsup: none of $$(echo $$(cat $(DEMO_HOME)/pids)) is alive"

wheel: build ## build a platform wheel with the static binary inside, in dist/
	@py=$$(.ci/find-python) && $$py bindings/python/build_wheel.py --binary $(BIN) --out dist

# Count-based fuzz limits: a time-based -fuzztime can end in a false
# "context deadline exceeded" on Go 1.26 (golang/go#75804).
fuzz: ## run the fuzzers (FUZZ_EXECS inputs each)
	$(GO) test -run '^$$' -fuzz FuzzDecoder -fuzztime $(FUZZ_EXECS)x ./decoder/
	$(GO) test -run '^$$' -fuzz FuzzCapture -fuzztime $(FUZZ_EXECS)x ./decoder/
	$(GO) test -run '^$$' -fuzz FuzzDecode -fuzztime $(FUZZ_EXECS)x ./protocol/
	$(GO) test -run '^$$' -fuzz FuzzTidy -fuzztime $(FUZZ_EXECS)x ./tidy/

FUZZ_PYTHON_CASES ?= 1000000

fuzz-python: ## compare the capture with Python's own decoder on FUZZ_PYTHON_CASES random inputs (SEED=n replays)
	@mkdir -p bin && $(GO) build -o bin/pydiff ./decoder/internal/pydiff
	@py=$$(.ci/find-python) && $$py testdata/fuzz_python.py --driver bin/pydiff --count $(FUZZ_PYTHON_CASES) $(if $(SEED),--seed $(SEED))

vet: ## go vet for Linux and darwin, and gofmt
	$(GO) vet ./...
	GOOS=darwin $(GO) vet ./...
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { gofmt -l $$(git ls-files '*.go'); exit 1; }

loc: ## lines of non-test Go per package, and the total
	@.ci/loc

clean: ## remove what the build, the tests and the wheel leave
	rm -rf bin dist bindings/python/build
	find . -name '*.egg-info' -prune -exec rm -rf {} +
