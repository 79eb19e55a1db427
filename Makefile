# libhoma - top-level Makefile: a thin wrapper around CMake.
#
#   make demo        build (build/) and run build/tools/homa-demo
#   make rpc-demo    build and run build/examples/rpc/rpc_bench: homa-rpc
#                    against the raw library and, when built, gRPC C++
#                    over TCP (grpc_bench) on loopback, as a table
#   make rpc-demo-deps  install gRPC C++ for rpc-demo
#   make test        build and run every test (ctest in build/)
#   make asan        the same with AddressSanitizer+UBSan in build-asan/
#   make tsan        the same with ThreadSanitizer in build-tsan/
#   make valgrind    the unit tests and the end-to-end programs under valgrind
#                    (memcheck) from the plain build in $(BUILD)/
#                    (scripts/valgrind.sh; logs in $(BUILD)/valgrind/)
#   make fuzz        build the fuzzers with clang in build-fuzz/ and run each
#                    for FUZZ_SECONDS (default 30) on a copy of its corpus
#                    (scripts/fuzz.sh; logs in build-fuzz/artifacts/)
#   make install     install into $(DESTDIR)$(PREFIX) (default /usr/local)
#   make deps        install the Debian packages the build and tests need
#   make kpeer-deps  the same for the kernel-peer testbed (scripts/kpeer/)
#   make kpeer-test  libhoma against the kernel Homa module in a QEMU guest
#                    (scripts/kpeer/interop.sh; needs root and
#                    HOMA_KERNEL_TARBALL, the module's source tarball)
#   make clean       remove every build directory
#
# Variables: HOMA_WERROR=ON (warnings are errors), JOBS=N (parallel jobs,
# default 2), DEMO_ARGS=... (arguments of homa-demo), RPC_DEMO_ARGS=...
# (arguments of rpc_bench, e.g. "--rounds 5 --busy 2"), CTEST_ARGS=... (extra
# ctest arguments, e.g. "-L unit"), KPEER_ARGS=... (arguments of
# scripts/kpeer/interop.sh, e.g. --short), VALGRIND_ARGS=... (arguments of
# scripts/valgrind.sh, e.g. "-k test_homa_pool"), FUZZ_ARGS=... (arguments
# of scripts/fuzz.sh, e.g. "ip4"), NO_DEPS=1 (skip the package check).

MAKEFLAGS    += --no-print-directory

BUILD        ?= build
JOBS         ?= 2
PREFIX       ?= /usr/local
DESTDIR      ?=
HOMA_WERROR  ?= OFF
FUZZ_SECONDS ?= 30
FUZZ_CC      ?= clang
DEMO_ARGS    ?=
RPC_DEMO_ARGS ?=
CTEST_ARGS   ?=
CMAKE        ?= cmake
CTEST        ?= ctest
CMAKE_ARGS   ?=
VALGRIND_ARGS ?=
FUZZ_ARGS    ?=
KPEER_ARGS   ?=

# Debian packages the build and the tests use.
DEPS_PACKAGES := make gcc libc6-dev binutils cmake pkg-config libcmocka-dev \
	clang libclang-rt-14-dev iproute2 iptables procps groff-base man-db \
	python3 python3-matplotlib tshark wireshark-common util-linux valgrind \
	libprotobuf-c-dev protobuf-c-compiler

# What 'make rpc-demo' needs for its gRPC C++ side (grpc_bench).
RPC_DEMO_DEPS_PACKAGES := g++ libgrpc++-dev protobuf-compiler-grpc \
	protobuf-compiler libprotobuf-dev

# What the kernel-peer testbed (scripts/kpeer/) needs on top: a QEMU guest
# with a Debian rootfs built by debootstrap into an ext4 image, a 9p share.
KPEER_DEPS_PACKAGES := qemu-system-x86 qemu-utils debootstrap e2fsprogs \
	debian-archive-keyring curl ca-certificates iproute2 iptables tshark \
	util-linux

# Configure (again, cheap when nothing changed) and build one directory.
# $(1) = build directory, $(2) = extra cmake arguments.
define configure_and_build
	$(CMAKE) -S . -B $(1) -DHOMA_WERROR=$(HOMA_WERROR) $(2) $(CMAKE_ARGS)
	$(CMAKE) --build $(1) -j $(JOBS)
endef

ifeq ($(NO_DEPS),)
DEPS_STEP := deps
KPEER_DEPS_STEP := kpeer-deps
else
DEPS_STEP :=
KPEER_DEPS_STEP :=
endif

.PHONY: all build demo rpc-demo rpc-demo-deps test asan tsan valgrind fuzz install \
	install-only deps \
	kpeer-deps kpeer-test clean

all: build

build: $(DEPS_STEP)
	$(call configure_and_build,$(BUILD),)

demo: build
	$(BUILD)/tools/homa-demo $(DEMO_ARGS)

# gRPC's side of the demo when gRPC C++ is installed (rpc-demo-deps).
rpc-demo: build
	@grpc=$(BUILD)/examples/rpc/grpc/grpc_bench; \
	if [ -x $$grpc ]; then set -- --grpc $$grpc; else \
		echo "note: gRPC C++ not built ('make rpc-demo-deps'); left out"; \
		set --; fi; \
	$(BUILD)/examples/rpc/rpc_bench "$$@" $(RPC_DEMO_ARGS)

test: build
	cd $(BUILD) && $(CTEST) --output-on-failure --no-tests=error -j $(JOBS) $(CTEST_ARGS)

asan: $(DEPS_STEP)
	$(call configure_and_build,build-asan,-DHOMA_SANITIZE=address)
	cd build-asan && \
	ASAN_OPTIONS=$${ASAN_OPTIONS:-abort_on_error=0:detect_leaks=1} \
	UBSAN_OPTIONS=$${UBSAN_OPTIONS:-print_stacktrace=1} \
	$(CTEST) --output-on-failure --no-tests=error -j $(JOBS) $(CTEST_ARGS)

tsan: $(DEPS_STEP)
	$(call configure_and_build,build-tsan,-DHOMA_SANITIZE=thread)
	cd build-tsan && \
	TSAN_OPTIONS=$${TSAN_OPTIONS:-halt_on_error=1:second_deadlock_stack=1} \
	$(CTEST) --output-on-failure --no-tests=error -j $(JOBS) $(CTEST_ARGS)

# The plain build (valgrind cannot run sanitized programs); the script
# configures and builds $(BUILD) itself (cheap after 'make test').  Not
# 'ctest -T memcheck': it would hold each program to its test's TIMEOUT
# (120 s for a unit test, which valgrind makes 20-50 times slower) instead
# of VALGRIND_TIMEOUT, and would leave valgrind's reports in numbered
# files of Testing/Temporary/ instead of naming the errors on failure.
valgrind: $(DEPS_STEP)
	HOMA_WERROR=$(HOMA_WERROR) JOBS=$(JOBS) \
		scripts/valgrind.sh -B $(BUILD) $(VALGRIND_ARGS)

# The fuzzers, built with clang in build-fuzz/; each fuzz/fuzz_NAME.c runs
# for FUZZ_SECONDS on a temporary copy of fuzz/corpus/NAME/ (new inputs are
# not written into the repository), crashing inputs kept in
# build-fuzz/artifacts/ (scripts/fuzz.sh; FUZZ_ARGS=... its arguments, e.g.
# the names of some fuzzers).
fuzz: $(DEPS_STEP)
	CC=$(FUZZ_CC) CMAKE="$(CMAKE)" CMAKE_ARGS="$(CMAKE_ARGS)" \
		HOMA_WERROR=$(HOMA_WERROR) JOBS=$(JOBS) \
		scripts/fuzz.sh -B build-fuzz -t $(FUZZ_SECONDS) $(FUZZ_ARGS)

# The kernel-peer interop suite: builds (once, cached) and boots a guest
# running the kernel Homa module of HOMA_KERNEL_TARBALL; exit status 77
# when it cannot start (see scripts/kpeer/interop.sh --help).
kpeer-test: $(KPEER_DEPS_STEP) build
	scripts/kpeer/interop.sh --build $(BUILD) $(KPEER_ARGS)

install: build
	$(MAKE) --no-print-directory install-only

# Install what $(BUILD) holds, without building (the install test uses it).
install-only:
	@[ -f $(BUILD)/cmake_install.cmake ] || { \
		echo "error: $(BUILD)/ is not configured; run 'make' first." >&2; \
		exit 1; }
	DESTDIR="$(DESTDIR)" $(CMAKE) --install $(BUILD) --prefix "$(PREFIX)"

# Cheap when everything is present: one dpkg-query per package.
# $(1) = the packages.
define install_missing
	@if ! command -v dpkg-query >/dev/null 2>&1; then \
		echo "make $@: not a Debian system; install by hand:" \
		     "$(1)"; exit 0; \
	fi; \
	missing=""; \
	for p in $(1); do \
		dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | \
			grep -q '^install ok installed$$' || missing="$$missing $$p"; \
	done; \
	if [ -z "$$missing" ]; then exit 0; fi; \
	if [ "$$(id -u)" -ne 0 ]; then \
		echo "error: missing Debian packages:$$missing" >&2; \
		echo "       run 'sudo make $@', or 'make ... NO_DEPS=1' to skip this check." >&2; \
		exit 1; \
	fi; \
	echo "make $@: installing$$missing"; \
	export DEBIAN_FRONTEND=noninteractive; \
	apt-get update -q && \
	apt-get install -y -q --no-install-recommends $$missing
endef

deps:
	$(call install_missing,$(DEPS_PACKAGES))

kpeer-deps:
	$(call install_missing,$(KPEER_DEPS_PACKAGES))

rpc-demo-deps:
	$(call install_missing,$(RPC_DEMO_DEPS_PACKAGES))

clean:
	rm -rf build build-asan build-tsan build-fuzz
