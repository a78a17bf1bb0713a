# Ferry: the two quick-start commands are `make demo` and `make test`; both set the machine up first.
SHELL := /bin/bash
export PATH := $(PATH):/opt/swift/usr/bin

## The package traits of this repository's own builds: an engine, and `Development` (the `ferry`
## tool and the service products, which apps get only with their traits: see Package.swift).
TRAITS := SQLCipher,Development
SYSTEM_TRAITS := SystemSQLite,Development

.PHONY: setup demo test doc-snippets test-sqlcipher test-system-sqlite test-example fuzz-smoke build-benchmarks docs bench bench-micro bench-micro-check clean

setup:
	@scripts/setup

## Runs the live-migration demo (release build).
demo: setup
	swift run -c release --traits $(TRAITS) ferry demo

## Runs ferry-bench (release build): Ferry against plain SQL and WCDB's shapes, app-side cost, memory.
## Options go in BENCH_ARGS, e.g. `make bench BENCH_ARGS="--rows 200000 --selectivity 0.33"`.
## The build plan of Benchmarks/.build keeps the root package's list of source files: after a file was
## added to Ferry, its build failed ("cannot find 'HashedSQL' in scope") until the plan was made again.
bench: setup
	rm -f Benchmarks/.build/*/release/description.json
	swift run --package-path Benchmarks -c release ferry-bench $(BENCH_ARGS)

## Runs the check that the documentation's snippets are the ones the tests compile, then the whole
## test suite under both engines: SQLCipher (default trait) and the system SQLite; then a short
## fuzz run of the SQL front end, the example service's test (Examples/MessagesService), a build (not
## a run) of the benchmarks, and the documentation check.
## Long synchronous tests (the torture suites, the CLI's and the snippets' subprocess runs) run after the others, one
## at a time: run beside the rest they hold the few threads of Swift's cooperative pool (two on a
## 2-core machine) for minutes and starve the async tests.
SERIAL := DifferentialTests|CrashTests|Faults|FerryCLITests|DocSnippetRunTests

test: setup
	$(MAKE) --no-print-directory doc-snippets
	$(MAKE) --no-print-directory test-sqlcipher
	$(MAKE) --no-print-directory test-system-sqlite
	$(MAKE) --no-print-directory fuzz-smoke
	$(MAKE) --no-print-directory test-example
	$(MAKE) --no-print-directory build-benchmarks
	$(MAKE) --no-print-directory docs

test-sqlcipher:
	swift build --build-tests --traits $(TRAITS)
	swift test --skip-build --traits $(TRAITS) --skip '$(SERIAL)'
	swift test --skip-build --traits $(TRAITS) --filter '$(SERIAL)' --no-parallel

test-system-sqlite:
	swift build --build-tests --traits $(SYSTEM_TRAITS) --scratch-path .build-systemsqlite
	swift test --skip-build --traits $(SYSTEM_TRAITS) --scratch-path .build-systemsqlite --skip '$(SERIAL)'
	swift test --skip-build --traits $(SYSTEM_TRAITS) --scratch-path .build-systemsqlite --filter '$(SERIAL)' --no-parallel

## The example service (its own package): builds it and runs its test, which starts it as a process.
test-example:
	swift build --build-tests --package-path Examples/MessagesService
	swift test --skip-build --package-path Examples/MessagesService

## Fails when a Swift snippet of README.md, Docs/ or a DocC article changed and its generated file
## (Tests/DocSnippets/Generated, compiled with the tests) was not regenerated with
## scripts/extract-doc-snippets, or when a DocC article of Ferry is no longer the copy of its Docs/ page.
doc-snippets:
	scripts/extract-doc-snippets --check

## 25 s of libFuzzer on the SQL front end; fails on a crash, a failed check or an input running over 10 s.
fuzz-smoke:
	scripts/fuzz-sql 25

## Builds the DocC catalog of Ferry (swift-docc-plugin) with warnings as errors, and fails on an
## undocumented public symbol.
docs:
	scripts/check-docs

## Builds the benchmark package (Benchmarks/Package.swift: ferry-bench, the micro-benchmarks) without running it.
build-benchmarks:
	swift build --package-path Benchmarks

## Runs the micro-benchmarks (release build); see Benchmarks/README.md.
bench-micro: setup
	cd Benchmarks && swift package benchmark

## Runs the micro-benchmarks and compares their p90 with Benchmarks/Thresholds (exit status 2: a regression; 4: only improvements).
bench-micro-check: setup
	cd Benchmarks && swift package benchmark thresholds check

clean:
	rm -rf .build .build-systemsqlite .build-fuzz Benchmarks/.build
