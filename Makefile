# Thin wrapper over CMake: the two commands of the README and a few more.
# `make demo` and `make test` install missing Debian packages first.

BUILD      ?= build
ASAN_BUILD ?= build-asan
# The suite's build: optimised like $(BUILD) but with assertions on
# (RelWithAsserts, -O2 without -DNDEBUG); $(BUILD) stays Release (-O3
# -DNDEBUG) for `make bench`, `make demo` and `make install`.
TEST_BUILD ?= build-check
JOBS       ?= $(shell nproc 2>/dev/null || echo 2)

.PHONY: all deps build install demo test test-fast test-asan bench bench-full bench-peers golden plots replications fuzz fuzz-scenarios valgrind clean mutation

all: build

deps:
	@scripts/install-deps

$(BUILD)/CMakeCache.txt:
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release >/dev/null

build: deps $(BUILD)/CMakeCache.txt
	cmake --build $(BUILD) -j $(JOBS)

# The binary, the man page dtsim.1, the bash completion and plots/plot.sh
# under PREFIX (default: CMake's, /usr/local).
install: build
	cmake --install $(BUILD) $(if $(PREFIX),--prefix $(PREFIX))

demo: build
	$(BUILD)/dtsim run scenarios/quickstart.json -o results/quickstart --force

$(ASAN_BUILD)/CMakeCache.txt:
	cmake -S . -B $(ASAN_BUILD) -DCMAKE_BUILD_TYPE=Debug -DDTSIM_SANITIZE=ON >/dev/null

$(TEST_BUILD)/CMakeCache.txt:
	cmake -S . -B $(TEST_BUILD) -DCMAKE_BUILD_TYPE=RelWithAsserts >/dev/null

# The whole Check suite (assertions on), then the same suite under ASan + UBSan.
test: test-fast test-asan

test-fast: deps $(TEST_BUILD)/CMakeCache.txt
	cmake --build $(TEST_BUILD) -j $(JOBS)
	ctest --test-dir $(TEST_BUILD) --output-on-failure -j $(JOBS)

test-asan: deps $(ASAN_BUILD)/CMakeCache.txt
	cmake --build $(ASAN_BUILD) -j $(JOBS)
	ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
	  ctest --test-dir $(ASAN_BUILD) --output-on-failure -j $(JOBS)

# libFuzzer on every reader (docs/reliability.md): builds build-fuzz/ with
# clang, then runs each harness for FUZZ_SECONDS (default 600) on a copy of
# its seed corpus under build-fuzz/corpus/, which grows from run to run.
# Crash inputs land in build-fuzz/crashes/; copy them to
# tests/fuzz/regressions/HARNESS/ once fixed.
FUZZ_BUILD    ?= build-fuzz
FUZZ_SECONDS  ?= 600
FUZZ_HARNESSES ?= scenario scenario_set trace libsvm csv idx edges
fuzz: deps
	@scripts/install-deps --fuzz
	@[ -f $(FUZZ_BUILD)/CMakeCache.txt ] || CC=clang-14 cmake -S . -B $(FUZZ_BUILD) \
	  -DCMAKE_BUILD_TYPE=Debug -DDTSIM_FUZZ=ON >/dev/null
	cmake --build $(FUZZ_BUILD) -j $(JOBS) $(addprefix --target fuzz_,$(FUZZ_HARNESSES))
	@mkdir -p $(FUZZ_BUILD)/crashes
	for h in $(FUZZ_HARNESSES); do \
	  mkdir -p $(FUZZ_BUILD)/corpus/$$h && \
	  ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
	  $(FUZZ_BUILD)/tests/fuzz_$$h -max_total_time=$(FUZZ_SECONDS) -rss_limit_mb=2048 \
	    -malloc_limit_mb=32768 -max_len=65536 -timeout=10 -print_final_stats=1 \
	    -artifact_prefix=$(FUZZ_BUILD)/crashes/$$h- \
	    $(FUZZ_BUILD)/corpus/$$h tests/fuzz/corpus/$$h || exit 1; \
	done

# The random valid-scenario fuzzer (tests/fuzz/scenarios.py) on the
# ASan + UBSan build, at low priority: FUZZ_CASES cases from FUZZ_SEED, each
# run limited to FUZZ_TIMEOUT seconds; failing scenarios are kept in
# $(ASAN_BUILD)/fuzz-scenarios/ (docs/reliability.md).
FUZZ_CASES   ?= 2000
FUZZ_SEED    ?= 1
FUZZ_TIMEOUT ?= 120
fuzz-scenarios: deps $(ASAN_BUILD)/CMakeCache.txt
	cmake --build $(ASAN_BUILD) -j $(JOBS) --target dtsim
	ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 nice -n 19 \
	  python3 tests/fuzz/scenarios.py $(ASAN_BUILD)/dtsim --cases $(FUZZ_CASES) \
	  --seed $(FUZZ_SEED) --timeout $(FUZZ_TIMEOUT) --findings $(ASAN_BUILD)/fuzz-scenarios

# The quickstart under valgrind memcheck (ctest runs the same check as
# test_valgrind when valgrind is installed).
valgrind: build
	@scripts/install-deps --valgrind
	tests/valgrind_quickstart.sh valgrind $(BUILD)/dtsim .

# Figures (PNG and PDF) of the quickstart run, of two small quickstart
# sweeps (three protocols, three replicates; and the same with a target
# accuracy for the time-to-target bars), of every sweep already under
# results/, and the literature replications (`make replications`).
# Installs gnuplot-nox when missing.
plots: build
	@scripts/install-deps --plots
	$(BUILD)/dtsim run scenarios/quickstart.json -o results/quickstart --quiet --force
	$(BUILD)/dtsim sweep scenarios/quickstart.json -o results/quickstart-sweep --quiet \
	  --grid algorithm.name=dpsgd,adpsgd,allreduce --replicates 3
	$(BUILD)/dtsim sweep scenarios/quickstart.json -o results/quickstart-target --quiet \
	  --grid algorithm.name=dpsgd,adpsgd,allreduce --replicates 3 --set stop.target_accuracy=0.7
	plots/plot.sh results/quickstart
	for d in results/*/; do \
	  if [ -f $$d/sweep.csv ]; then plots/plot.sh $$d || exit 1; fi; \
	done
	$(MAKE) --no-print-directory replications

# The literature replications of scenarios/papers/ (docs/validation.md,
# "Replications"): sweeps, tables and figures under results/papers/.  A few
# minutes on two cores; complete sweeps are only redrawn.
replications: build
	@scripts/install-deps --plots
	scenarios/papers/run.sh all -j $(JOBS) -o results/papers

# Benchmarks print markdown tables; bench/RESULTS.md records them (by
# hand: no bench target edits a tracked file).  Every table and figure goes
# to $(BENCH_OUT) (default results/bench/, untracked); `make bench-full
# UPDATE_DOCS=1` also redraws docs/figures/scaling.png.  The SimGrid peer
# builds in a tree of its own ($(PEERS_BUILD), -DDTSIM_PEERS=ON) so that the
# normal build never needs SimGrid.
#   make bench       the quick set (a few minutes on two idle cores): the
#                    headline ratios side by side in one run
#   make bench-full  every table of bench/RESULTS.md (more than 10 minutes)
PEERS_BUILD ?= build-peers
BENCH_OUT   ?= results/bench
# a benchmark that fails fails the target (its output goes through tee)
bench bench-full: SHELL := /bin/bash
bench bench-full: .SHELLFLAGS := -o pipefail -c

bench-peers: build
	@scripts/install-deps --bench
	cmake -S . -B $(PEERS_BUILD) -DCMAKE_BUILD_TYPE=Release -DDTSIM_PEERS=ON >/dev/null
	cmake --build $(PEERS_BUILD) -j $(JOBS) --target simgrid_ring

bench: bench-peers
	mkdir -p $(BENCH_OUT)
	$(BUILD)/bench/bench_timing bench/scenarios/ring-none-dpsgd.json 3 \
	  64,1024,16384 | tee $(BENCH_OUT)/quick-timing-only-dpsgd.md
	bench/peers/compare.py $(BUILD)/dtsim $(PEERS_BUILD)/bench/simgrid_ring 3 200 64,256 \
	  | tee $(BENCH_OUT)/quick-simgrid.md
	$(BUILD)/bench/bench_quickstart scenarios/quickstart.json 3 | tee $(BENCH_OUT)/quick-quickstart.md
	OPENBLAS_NUM_THREADS=1 $(BUILD)/bench/bench_models | tee $(BENCH_OUT)/quick-models.md

bench-full: bench-peers
	mkdir -p $(BENCH_OUT)
	$(BUILD)/bench/bench_timing bench/scenarios/ring-none-dpsgd.json 3 \
	  16,64,256,1024,4096,16384 | tee $(BENCH_OUT)/timing-only-dpsgd.md
	$(BUILD)/bench/bench_timing bench/scenarios/ring-none-dpsgd.json 1 100000 \
	  | tail -1 | tee -a $(BENCH_OUT)/timing-only-dpsgd.md
	$(BUILD)/bench/bench_timing bench/scenarios/ring-none-dpsgd.json 3 \
	  16,64,256,1024,4096,16384 algorithm.name=adpsgd | tee $(BENCH_OUT)/timing-only-adpsgd.md
	$(BUILD)/bench/bench_timing bench/scenarios/ring-none-dpsgd.json 1 100000 \
	  algorithm.name=adpsgd | tail -1 | tee -a $(BENCH_OUT)/timing-only-adpsgd.md
	$(BUILD)/bench/bench_timing bench/scenarios/ring-softmax-dpsgd.json 3 \
	  16,64,256,1024,4096,10000 | tee $(BENCH_OUT)/softmax-dpsgd.md
	bench/plot_scaling.sh $(if $(UPDATE_DOCS),docs/figures/scaling.png,$(BENCH_OUT)/scaling.png) \
	  $(BENCH_OUT)/timing-only-dpsgd.md $(BENCH_OUT)/timing-only-adpsgd.md $(BENCH_OUT)/softmax-dpsgd.md
	bench/peers/compare.py $(BUILD)/dtsim $(PEERS_BUILD)/bench/simgrid_ring 3 200 16,64,256,1024 \
	  | tee $(BENCH_OUT)/simgrid.md
	$(BUILD)/bench/bench_engine | tee $(BENCH_OUT)/engine.md
	$(BUILD)/bench/bench_quickstart scenarios/quickstart.json 7 | tee $(BENCH_OUT)/quickstart.md
	$(BUILD)/bench/bench_quickstart scenarios/ring16-allreduce.json 7 | tee -a $(BENCH_OUT)/quickstart.md
	$(BUILD)/bench/bench_quickstart scenarios/ring16-adpsgd.json 7 | tee -a $(BENCH_OUT)/quickstart.md
	OPENBLAS_NUM_THREADS=1 $(BUILD)/bench/bench_models | tee $(BENCH_OUT)/models.md
	$(BUILD)/bench/bench_topo 3 | tee $(BENCH_OUT)/topo.md

# Compares every tests/data/golden-NAME.json run with tests/golden/NAME/
# and shows the diff; overwrites only with `make golden ACCEPT=1`, for a
# deliberate behaviour change named in the commit (docs/testing.md).
golden: build
	ACCEPT=$(ACCEPT) scripts/golden.sh $(BUILD)/dtsim .

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) $(PEERS_BUILD) $(TEST_BUILD) build-mut

# Mutation testing (docs/testing.md): plants each bug of tests/mutants.tsv
# in turn, rebuilds build-mut/ (RelWithAsserts) and runs the suite without
# the slow tests; prints the kill rate and every survivor.  Not part of
# `make test` (about a minute per mutant on two cores).  MUTATION_ARGS
# passes options, e.g. MUTATION_ARGS="--only ps-sync-sum,sgp-debias".
MUTATION_ARGS ?=
mutation: deps
	@command -v python3 >/dev/null || DEBIAN_FRONTEND=noninteractive apt-get install -y python3
	nice -n 19 python3 scripts/mutation.py $(MUTATION_ARGS)
