# Ferry: the two quick-start commands are `make demo` and `make test`; both set the machine up first.
SHELL := /bin/bash
export PATH := $(PATH):/opt/swift/usr/bin

.PHONY: setup demo test test-sqlcipher test-system-sqlite fuzz-smoke build-benchmarks bench clean

setup:
	@scripts/setup

## Runs the live-migration demo (release build).
demo: setup
	swift run -c release ferry demo

## Runs ferry-bench (release build): Ferry against plain SQL and WCDB's shapes, app-side cost, memory.
## Options go in BENCH_ARGS, e.g. `make bench BENCH_ARGS="--rows 200000 --selectivity 0.33"`.
bench: setup
	swift run -c release ferry-bench $(BENCH_ARGS)

## Runs the whole test suite under both engines: SQLCipher (default trait) and the system SQLite; then a short
## fuzz run of the SQL front end.
## Long synchronous tests (the torture suites, the CLI's subprocess tests) run after the others, one
## at a time: run beside the rest they hold the few threads of Swift's cooperative pool (two on a
## 2-core machine) for minutes and starve the async tests.
SERIAL := DifferentialTests|CrashTests|Faults|FerryCLITests

test: setup
	$(MAKE) --no-print-directory test-sqlcipher
	$(MAKE) --no-print-directory test-system-sqlite
	$(MAKE) --no-print-directory fuzz-smoke

test-sqlcipher:
	swift build --build-tests
	swift test --skip-build --skip '$(SERIAL)'
	swift test --skip-build --filter '$(SERIAL)' --no-parallel

test-system-sqlite:
	swift build --build-tests --traits SystemSQLite --scratch-path .build-systemsqlite
	swift test --skip-build --traits SystemSQLite --scratch-path .build-systemsqlite --skip '$(SERIAL)'
	swift test --skip-build --traits SystemSQLite --scratch-path .build-systemsqlite --filter '$(SERIAL)' --no-parallel

## 25 s of libFuzzer on the SQL front end; fails on a crash, a failed check or an input running over 10 s.
fuzz-smoke:
	scripts/fuzz-sql 25

clean:
	rm -rf .build .build-systemsqlite .build-fuzz
