/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * e2e_util.c - shared helpers of the end-to-end tests (see e2e_util.h).
 */
#include "e2e_util.h"

#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "tool_addr.h"
#include "tool_clock.h"
#include "tool_counters.h"
#include "tool_hsock.h"

/* ------------------------------------------------------------------ */
/* Runner and watchdog                                                 */
/* ------------------------------------------------------------------ */

extern char **environ;

static char **g_argv;
static const struct e2e_test *g_tests;
static size_t g_ntests;
static volatile sig_atomic_t g_current = -1;  /* index of the running test */
static char g_self[4096] = "/proc/self/exe";   /* this program, for restarts */
static char **g_envp;                          /* environment for restarts */
static size_t g_envn;                          /* entries kept from environ */
static char g_env_resume[64];
static char g_env_timedout[2048];
static const char *g_old_timedout;             /* E2E_TIMEDOUT at start */
static int g_skipped;                          /* tests or parts skipped */

/* Appends string @s at @p (bounded by @end); returns the new end.
 * Async-signal-safe. */
static char *sig_append(char *p, char *end, const char *s)
{
	while (*s && p < end - 1)
		*p++ = *s++;
	*p = 0;
	return p;
}

/* Appends the decimal form of @v at @p; async-signal-safe. */
static char *sig_append_num(char *p, char *end, unsigned long v)
{
	char tmp[24];
	int n = 0;

	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	while (n && p < end - 1)
		*p++ = tmp[--n];
	*p = 0;
	return p;
}

/* Writes a NUL-terminated string to @fd; async-signal-safe. */
static void sig_write(int fd, const char *s)
{
	size_t n = strlen(s);

	while (n) {
		ssize_t w = write(fd, s, n);

		if (w <= 0)
			return;
		s += w;
		n -= (size_t)w;
	}
}

/* SIGALRM handler: the running test overran its budget.  Reports it and
 * re-executes the program to run the tests after it. */
static void on_alarm(int sig)
{
	char line[512];
	char *p, *end = line + sizeof line;
	int idx = g_current;
	const char *old = g_old_timedout;

	(void)sig;
	if (idx < 0 || (size_t)idx >= g_ntests) {
		sig_write(2, "[  TIMEOUT ] (between tests)\n");
		_exit(1);
	}
	p = sig_append(line, end, "[  TIMEOUT ] ");
	p = sig_append(p, end, g_tests[idx].name);
	p = sig_append(p, end, ": did not finish within ");
	p = sig_append_num(p, end, g_tests[idx].timeout_s);
	p = sig_append(p, end, " s; restarting for the remaining tests\n");
	sig_write(1, line);

	p = sig_append(g_env_resume, g_env_resume + sizeof g_env_resume,
		       "E2E_RESUME=");
	sig_append_num(p, g_env_resume + sizeof g_env_resume,
		       (unsigned long)idx + 1);
	end = g_env_timedout + sizeof g_env_timedout;
	p = sig_append(g_env_timedout, end, "E2E_TIMEDOUT=");
	if (old && *old) {
		p = sig_append(p, end, old);
		p = sig_append(p, end, ",");
	}
	sig_append_num(p, end, (unsigned long)idx);
	g_envp[g_envn] = g_env_resume;
	g_envp[g_envn + 1] = g_env_timedout;
	g_envp[g_envn + 2] = NULL;
	/* Leave the old image's sockets behind. */
	for (int fd = 3; fd < 4096; fd++)
		close(fd);
	execve(g_self, g_argv, g_envp);
	sig_write(2, "e2e: re-exec failed\n");
	_exit(1);
}

static void cleanup_registered(void);

/* remember_self - this program's path, for the watchdog's restart: the
 * target of /proc/self/exe, which valgrind reports as the program it runs
 * (executing /proc/self/exe itself would start valgrind's own binary, and
 * fails).  Keeps "/proc/self/exe" when the link cannot be read. */
static void remember_self(void)
{
	char path[sizeof g_self];
	ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);

	if (n <= 0 || (size_t)n >= sizeof path - 1)
		return;
	path[n] = '\0';
	memcpy(g_self, path, (size_t)n + 1);
}

/* cmocka setup of every test: arms the watchdog. */
static int test_setup(void **state)
{
	const struct e2e_test *t = *state;

	g_current = (int)(t - g_tests);
	alarm(t->timeout_s);
	return 0;
}

/* cmocka teardown of every test: releases what the test left, disarms. */
static int test_teardown(void **state)
{
	(void)state;
	cleanup_registered();
	alarm(0);
	g_current = -1;
	return 0;
}

int e2e_main(int argc, char **argv, const char *group,
	     const struct e2e_test *tests, size_t n)
{
	const char *resume = getenv("E2E_RESUME");
	const char *timedout = getenv("E2E_TIMEDOUT");
	const char *filter = argc > 1 ? argv[1] : NULL;
	size_t start = resume ? strtoul(resume, NULL, 10) : 0;
	struct CMUnitTest *ct;
	struct sigaction sa;
	sigset_t mask;
	size_t i, m = 0, envc = 0;
	int failed, late = 0;

	setvbuf(stdout, NULL, _IONBF, 0);
	g_old_timedout = timedout;
	g_argv = argv;
	remember_self();
	g_tests = tests;
	g_ntests = n;
	while (environ[envc])
		envc++;
	g_envp = calloc(envc + 3, sizeof *g_envp);
	ct = calloc(n ? n : 1, sizeof *ct);
	if (!g_envp || !ct)
		return 2;
	for (i = 0; i < envc; i++) {
		if (strncmp(environ[i], "E2E_RESUME=", 11) == 0 ||
		    strncmp(environ[i], "E2E_TIMEDOUT=", 13) == 0)
			continue;
		g_envp[g_envn++] = environ[i];
	}

	/* A restart comes from inside the SIGALRM handler, whose blocked
	 * SIGALRM the new image inherits: unblock it. */
	sigemptyset(&mask);
	sigaddset(&mask, SIGALRM);
	sigprocmask(SIG_UNBLOCK, &mask, NULL);
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_alarm;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGALRM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);

	for (i = start; i < n; i++) {
		if (filter && !strstr(tests[i].name, filter))
			continue;
		if (tests[i].no_valgrind && getenv("E2E_VALGRIND")) {
			printf("[ NOT RUN  ] %s: not under valgrind, which runs "
			       "one thread at a time\n", tests[i].name);
			continue;
		}
		ct[m].name = tests[i].name;
		ct[m].test_func = tests[i].fn;
		ct[m].setup_func = test_setup;
		ct[m].teardown_func = test_teardown;
		ct[m].initial_state = (void *)&tests[i];
		m++;
	}
	failed = m ? _cmocka_run_group_tests(group, ct, m, NULL, NULL) : 0;

	if (timedout && *timedout) {
		const char *p = timedout;

		while (*p) {
			unsigned long idx = strtoul(p, (char **)&p, 10);

			if (idx < n) {
				printf("[  TIMEOUT ] %s (earlier in this run)\n",
				       tests[idx].name);
				late++;
			}
			if (*p == ',')
				p++;
			else if (*p)
				break;
		}
		printf("%d test(s) timed out\n", late);
	}
	free(ct);
	if (failed || late)
		return 1;
	if (g_skipped) {
		printf("%d test(s) or parts skipped: exit status 77 "
		       "(skipped)\n", g_skipped);
		return 77;
	}
	return 0;
}

/* skip_note - the common part of e2e_skip and e2e_skip_part: fail when
 * @require is 1, else count and print the skip. */
static void skip_note(const char *require, const char *what,
		      const char *fmt, va_list ap)
{
	const char *r = getenv(require);
	char why[512];

	vsnprintf(why, sizeof why, fmt, ap);
	if (r && strcmp(r, "1") == 0)
		fail_msg("cannot run %s: %s (%s=1)", what, why, require);
	g_skipped++;
	printf("[e2e %s] SKIPPED %s: %s\n",
	       (g_current >= 0 && (size_t)g_current < g_ntests)
		       ? g_tests[g_current].name : "-", what, why);
}

void e2e_skip(const char *require, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	skip_note(require, "the test", fmt, ap);
	va_end(ap);
	skip();
}

void e2e_skip_part(const char *require, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	skip_note(require, "a part", fmt, ap);
	va_end(ap);
}

void e2e_log(const char *fmt, ...)
{
	char buf[1024];
	int idx = g_current;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	fprintf(stderr, "[e2e %s] %s\n",
		(idx >= 0 && (size_t)idx < g_ntests) ? g_tests[idx].name : "-",
		buf);
}

uint64_t e2e_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

void e2e_sleep_ms(unsigned ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

int e2e_wait_readable(int fd, unsigned ms)
{
	struct pollfd p = { fd, POLLIN, 0 };
	uint64_t end = e2e_now_ms() + ms;

	for (;;) {
		uint64_t now = e2e_now_ms();
		int n;

		if (now >= end)
			return 0;
		n = poll(&p, 1, (int)(end - now));
		if (n > 0)
			return 1;
		if (n == 0)
			return 0;
		if (errno != EINTR)
			return 0;
	}
}

uint64_t e2e_stat(int fd, const char *name)
{
	struct tool_counters c;
	uint64_t value = 0;

	if (tool_counters_read(&c, fd) == 0)
		tool_counters_find(&c, name, &value);
	return value;
}

void e2e_log_stats(int fd, const char *label)
{
	struct tool_counters c;
	char line[2048];
	size_t used = 0;

	if (tool_counters_read(&c, fd) < 0) {
		e2e_log("%s: homa_stats_get: %s", label, strerror(errno));
		return;
	}
	line[0] = 0;
	for (int i = 0; i < c.n; i++) {
		int w;

		if (!c.values[i] || !c.names[i])
			continue;
		w = snprintf(line + used, sizeof line - used, " %s=%llu",
			     c.names[i], (unsigned long long)c.values[i]);
		if (w < 0 || (size_t)w >= sizeof line - used)
			break;
		used += (size_t)w;
	}
	e2e_log("%s counters:%s", label, line);
}

/* ------------------------------------------------------------------ */
/* Per-thread scratch buffers                                          */
/* ------------------------------------------------------------------ */

#define E2E_NSCRATCH 3

static pthread_key_t g_scratch_key;
static pthread_once_t g_scratch_once = PTHREAD_ONCE_INIT;

/* Key destructor: frees a thread's scratch buffers when it exits. */
static void scratch_free(void *p)
{
	uint8_t **b = p;

	for (int i = 0; i < E2E_NSCRATCH; i++)
		free(b[i]);
	free(b);
}

/* Creates the key of the scratch buffers (once). */
static void scratch_init(void)
{
	pthread_key_create(&g_scratch_key, scratch_free);
}

uint8_t *e2e_scratch(int index)
{
	uint8_t **b;

	pthread_once(&g_scratch_once, scratch_init);
	b = pthread_getspecific(g_scratch_key);
	if (!b) {
		b = calloc(E2E_NSCRATCH, sizeof *b);
		if (!b)
			abort();
		pthread_setspecific(g_scratch_key, b);
	}
	if (index < 0 || index >= E2E_NSCRATCH)
		abort();
	if (!b[index]) {
		b[index] = malloc(HOMA_MAX_MESSAGE_LENGTH + 16);
		if (!b[index])
			abort();
	}
	return b[index];
}

/* ------------------------------------------------------------------ */
/* Registry of what a test created                                     */
/* ------------------------------------------------------------------ */

#define MAX_SOCKS 256
#define MAX_SERVERS 32

static pthread_mutex_t g_reg_lock = PTHREAD_MUTEX_INITIALIZER;
static struct e2e_sock *g_socks[MAX_SOCKS];
static struct e2e_server *g_servers[MAX_SERVERS];

/* Remembers @s for clean-up at the end of the test (if there is room). */
static void reg_sock(struct e2e_sock *s)
{
	pthread_mutex_lock(&g_reg_lock);
	for (int i = 0; i < MAX_SOCKS; i++) {
		if (!g_socks[i]) {
			g_socks[i] = s;
			break;
		}
	}
	pthread_mutex_unlock(&g_reg_lock);
}

/* Forgets @s; returns 1 if it was registered. */
static int unreg_sock(struct e2e_sock *s)
{
	int found = 0;

	pthread_mutex_lock(&g_reg_lock);
	for (int i = 0; i < MAX_SOCKS; i++) {
		if (g_socks[i] == s) {
			g_socks[i] = NULL;
			found = 1;
		}
	}
	pthread_mutex_unlock(&g_reg_lock);
	return found;
}

/* Remembers / forgets a server for clean-up. */
static void reg_server(struct e2e_server *srv, int add)
{
	pthread_mutex_lock(&g_reg_lock);
	for (int i = 0; i < MAX_SERVERS; i++) {
		if (add && !g_servers[i]) {
			g_servers[i] = srv;
			break;
		}
		if (!add && g_servers[i] == srv)
			g_servers[i] = NULL;
	}
	pthread_mutex_unlock(&g_reg_lock);
}

#define MAX_ALLOCS 64
static void *g_allocs[MAX_ALLOCS];

void *e2e_alloc(size_t size)
{
	void *p = calloc(1, size ? size : 1);
	int stored = 0;

	if (!p)
		abort();
	pthread_mutex_lock(&g_reg_lock);
	for (int i = 0; i < MAX_ALLOCS && !stored; i++) {
		if (!g_allocs[i]) {
			g_allocs[i] = p;
			stored = 1;
		}
	}
	pthread_mutex_unlock(&g_reg_lock);
	if (!stored)
		abort();        /* more than MAX_ALLOCS in one test */
	return p;
}

/* Stops every registered server and closes every registered socket. */
static void cleanup_registered(void)
{
	for (int i = 0; i < MAX_SERVERS; i++) {
		struct e2e_server *srv;

		pthread_mutex_lock(&g_reg_lock);
		srv = g_servers[i];
		pthread_mutex_unlock(&g_reg_lock);
		if (srv)
			e2e_server_stop(srv);
	}
	for (int i = 0; i < MAX_SOCKS; i++) {
		struct e2e_sock *s;

		pthread_mutex_lock(&g_reg_lock);
		s = g_socks[i];
		pthread_mutex_unlock(&g_reg_lock);
		if (s)
			e2e_sock_close(s);
	}
	pthread_mutex_lock(&g_reg_lock);
	for (int i = 0; i < MAX_ALLOCS; i++) {
		free(g_allocs[i]);
		g_allocs[i] = NULL;
	}
	pthread_mutex_unlock(&g_reg_lock);
}

/* ------------------------------------------------------------------ */
/* Sockets                                                             */
/* ------------------------------------------------------------------ */

struct e2e_sock *e2e_socket(int family, size_t region_len)
{
	struct e2e_sock *s = calloc(1, sizeof *s);
	int e;

	if (!s)
		return NULL;
	s->family = family;
	s->fd = homa_socket(family, SOCK_DGRAM, IPPROTO_HOMA);
	if (s->fd < 0) {
		e = errno;
		e2e_log("homa_socket(%d): %s", family, strerror(e));
		free(s);
		errno = e;
		return NULL;
	}
	if (region_len) {
		char why[128];

		s->region = tool_region_attach(s->fd, region_len, why,
					       sizeof why);
		if (!s->region) {
			e = errno;
			e2e_log("region of %zu bytes: %s", region_len, why);
			homa_close(s->fd);
			free(s);
			errno = e;
			return NULL;
		}
		s->region_len = region_len;
	}
	reg_sock(s);
	return s;
}

uint16_t e2e_next_port(void)
{
	static atomic_uint k;
	unsigned base = (unsigned)getpid() % 5000u;
	unsigned i = atomic_fetch_add(&k, 1);

	return (uint16_t)(20000u + (base + i) % 12768u);
}

int e2e_bind_port(int fd, int family, uint16_t port)
{
	union sockaddr_in_union a = tool_addr_any(family, port);

	return homa_bind(fd, &a.sa, tool_addr_len(&a));
}

struct e2e_sock *e2e_server_socket(int family, size_t region_len)
{
	struct e2e_sock *s = e2e_socket(family, region_len);

	if (!s)
		return NULL;
	for (int tries = 0; tries < 500; tries++) {
		uint16_t port = e2e_next_port();

		if (e2e_bind_port(s->fd, family, port) == 0) {
			s->port = port;
			return s;
		}
		if (errno != EADDRINUSE) {
			int e = errno;

			e2e_log("homa_bind(port %u): %s", port, strerror(e));
			e2e_sock_close(s);
			errno = e;
			return NULL;
		}
	}
	e2e_log("homa_bind: no free port after 500 tries");
	e2e_sock_close(s);
	errno = EADDRINUSE;
	return NULL;
}

int e2e_sock_close(struct e2e_sock *s)
{
	int r;

	if (!s)
		return 0;
	unreg_sock(s);
	r = homa_close(s->fd);
	if (s->region)
		munmap(s->region, s->region_len);
	free(s);
	return r;
}

void e2e_addr(int family, uint16_t port, union sockaddr_in_union *a)
{
	*a = tool_addr_loopback(family, port);
}

union sockaddr_in_union e2e_sock_addr(const struct e2e_sock *s)
{
	union sockaddr_in_union a;

	e2e_addr(s->family, s->port, &a);
	return a;
}

uint16_t e2e_addr_port(const union sockaddr_in_union *a)
{
	return tool_addr_port(a);
}

/* ------------------------------------------------------------------ */
/* Message contents                                                    */
/* ------------------------------------------------------------------ */

#define GOLDEN 0x9E3779B97F4A7C15ull

/* splitmix64 finalizer: a well-mixed 64-bit function of @x. */
static uint64_t mix64(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xBF58476D1CE4E5B9ull;
	x ^= x >> 27;
	x *= 0x94D049BB133111EBull;
	x ^= x >> 31;
	return x;
}

/* Writes @v little endian at @p (@n bytes). */
static void put_le(uint8_t *p, uint64_t v, int n)
{
	for (int i = 0; i < n; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

/* Reads @n bytes little endian at @p. */
static uint64_t get_le(const uint8_t *p, int n)
{
	uint64_t v = 0;

	for (int i = 0; i < n; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

/* Builds the header of a message of @len bytes into @hdr; returns how many
 * leading bytes it covers (0, 8, 12 or 16). */
static size_t make_hdr(uint8_t hdr[16], size_t len, uint64_t seed,
		       uint32_t resp_len, uint32_t delay_ms)
{
	size_t hl = 0;

	if (len >= 8) {
		put_le(hdr, seed, 8);
		hl = 8;
	}
	if (len >= 12) {
		put_le(hdr + 8, resp_len, 4);
		hl = 12;
	}
	if (len >= 16) {
		put_le(hdr + 12, delay_ms, 4);
		hl = 16;
	}
	return hl;
}

void e2e_fill(uint8_t *buf, size_t len, uint64_t seed, uint32_t resp_len,
	      uint32_t delay_ms)
{
	uint8_t hdr[16];
	size_t hl, i = 0;

	for (uint64_t w = 0; i < len; w++) {
		uint64_t v = mix64(seed + w * GOLDEN);

		for (int b = 0; b < 8 && i < len; b++, i++)
			buf[i] = (uint8_t)(v >> (8 * b));
	}
	hl = make_hdr(hdr, len, seed, resp_len, delay_ms);
	memcpy(buf, hdr, hl);
}

size_t e2e_verify(const uint8_t *buf, size_t len, uint64_t seed,
		  uint32_t resp_len, uint32_t delay_ms)
{
	uint8_t hdr[16];
	size_t hl = make_hdr(hdr, len, seed, resp_len, delay_ms);
	size_t i = 0;

	for (uint64_t w = 0; i < len; w++) {
		uint64_t v = mix64(seed + w * GOLDEN);

		for (int b = 0; b < 8 && i < len; b++, i++) {
			uint8_t want = i < hl ? hdr[i] : (uint8_t)(v >> (8 * b));

			if (buf[i] != want)
				return i;
		}
	}
	return SIZE_MAX;
}

uint64_t e2e_seed_of(const uint8_t *msg, size_t len)
{
	uint64_t h = 0xcbf29ce484222325ull;

	if (len >= 8)
		return get_le(msg, 8);
	for (size_t i = 0; i < len; i++)
		h = (h ^ msg[i]) * 0x100000001b3ull;
	return h ^ len;
}

uint32_t e2e_hdr_resp_len(const uint8_t *msg, size_t len)
{
	return len >= 12 ? (uint32_t)get_le(msg + 8, 4) : 0;
}

uint32_t e2e_hdr_delay_ms(const uint8_t *msg, size_t len)
{
	return len >= 16 ? (uint32_t)get_le(msg + 12, 4) : 0;
}

static uint64_t g_seed_base;
static pthread_once_t g_seed_once = PTHREAD_ONCE_INIT;

/* Sets the per-process seed base (once). */
static void seed_init(void)
{
	g_seed_base = mix64(((uint64_t)getpid() << 32) ^ e2e_now_ms());
}

uint64_t e2e_seed(uint64_t k)
{
	uint64_t s;

	pthread_once(&g_seed_once, seed_init);
	s = mix64(g_seed_base + k * GOLDEN);
	return s ? s : 1;
}

uint64_t e2e_resp_seed(uint64_t s)
{
	return mix64(s ^ 0x5245535053454544ull);   /* "RESPSEED" */
}

size_t e2e_make_response(const uint8_t *req, size_t req_len,
			 size_t srv_default, uint8_t *out)
{
	uint32_t want = e2e_hdr_resp_len(req, req_len);
	size_t len;

	if (want == E2E_RESP_ECHO || (want == 0 && srv_default == 0)) {
		memcpy(out, req, req_len);
		return req_len;
	}
	len = want ? want : srv_default;
	if (len > HOMA_MAX_MESSAGE_LENGTH)
		len = HOMA_MAX_MESSAGE_LENGTH;
	e2e_fill(out, len, e2e_resp_seed(e2e_seed_of(req, req_len)), 0, 0);
	return len;
}

/* ------------------------------------------------------------------ */
/* Sending and receiving                                               */
/* ------------------------------------------------------------------ */

ssize_t e2e_recv_r(struct e2e_sock *s, struct e2e_bpages *ret, uint64_t id,
		   int flags, int call_flags, struct e2e_msg *m)
{
	struct homa_recvmsg_args args;
	struct msghdr h;
	uint32_t n = ret->n < HOMA_MAX_BPAGES ? ret->n : HOMA_MAX_BPAGES;
	ssize_t r;
	int e;

	memset(&args, 0, sizeof args);
	memset(&h, 0, sizeof h);
	memset(m, 0, sizeof *m);
	args.id = id;
	args.flags = flags;
	args.num_bpages = n;
	memcpy(args.bpage_offsets, ret->offs, n * sizeof ret->offs[0]);
	h.msg_name = &m->name;
	h.msg_namelen = sizeof m->name;
	h.msg_control = &args;
	h.msg_controllen = sizeof args;
	r = homa_recvmsg(s->fd, &h, call_flags);
	e = errno;
	if (!(r < 0 && e == EINVAL)) {
		memmove(ret->offs, ret->offs + n,
			(ret->n - n) * sizeof ret->offs[0]);
		ret->n -= n;
	}
	m->len = r;
	m->err = r < 0 ? e : 0;
	m->id = args.id;
	m->cookie = args.completion_cookie;
	m->peer = args.peer_addr;
	m->namelen = h.msg_namelen;
	m->num_bpages = args.num_bpages;
	memcpy(m->offs, args.bpage_offsets, sizeof m->offs);
	errno = e;
	return r;
}

ssize_t e2e_recv(struct e2e_sock *s, uint64_t id, int flags, int call_flags,
		 struct e2e_msg *m)
{
	return e2e_recv_r(s, &s->ret, id, flags, call_flags, m);
}

ssize_t e2e_recv_wait(struct e2e_sock *s, uint64_t id, int flags,
		      struct e2e_msg *m, unsigned ms)
{
	/* Hand back pending bpages first: a message waiting for buffer space
	 * cannot make the socket readable before they are returned. */
	while (s->ret.n > 0) {
		ssize_t r = e2e_recv(s, id, flags | HOMA_RECVMSG_NONBLOCKING,
				     0, m);

		if (r >= 0 || m->err != EAGAIN)
			return r;
	}
	if (!e2e_wait_readable(s->fd, ms)) {
		memset(m, 0, sizeof *m);
		m->len = -1;
		m->err = ETIME;
		e2e_log("nothing to receive on fd %d after %u ms", s->fd, ms);
		e2e_log_stats(s->fd, "waiting socket");
		errno = ETIME;
		return -1;
	}
	return e2e_recv(s, id, flags, 0, m);
}

int e2e_release_r(struct e2e_bpages *ret, struct e2e_msg *m)
{
	uint32_t n = m->num_bpages <= HOMA_MAX_BPAGES ? m->num_bpages
						       : HOMA_MAX_BPAGES;

	if (ret->n + n > E2E_MAX_PENDING)
		return -1;
	memcpy(ret->offs + ret->n, m->offs, n * sizeof m->offs[0]);
	ret->n += n;
	m->num_bpages = 0;
	return 0;
}

int e2e_release(struct e2e_sock *s, struct e2e_msg *m)
{
	return e2e_release_r(&s->ret, m);
}

int e2e_collect(const struct e2e_sock *s, const struct e2e_msg *m,
		uint8_t *out, char *why, size_t whylen)
{
	size_t len, need;

	if (m->len < 0) {
		snprintf(why, whylen, "no message: errno %d (%s)", m->err,
			 strerror(m->err));
		return -1;
	}
	if (!s->region) {
		snprintf(why, whylen, "socket has no region");
		return -1;
	}
	len = (size_t)m->len;
	if (tool_bpages_check(m->offs, m->num_bpages, len, s->region_len, why,
			      whylen) < 0)
		return -1;
	need = m->num_bpages;
	for (size_t i = 0; i < need; i++) {
		size_t chunk = i + 1 < need ? HOMA_BPAGE_SIZE
					    : len - HOMA_BPAGE_SIZE * (need - 1);

		memcpy(out + i * HOMA_BPAGE_SIZE, s->region + m->offs[i],
		       chunk);
	}
	return 0;
}

ssize_t e2e_take_request(struct e2e_sock *s, struct e2e_msg *m, uint8_t *req,
			 size_t srv_default, uint8_t *resp, char *why,
			 size_t whylen)
{
	size_t rlen;

	if (e2e_collect(s, m, req, why, whylen) != 0)
		return -1;
	rlen = e2e_make_response(req, (size_t)m->len, srv_default, resp);
	e2e_release(s, m);
	return (ssize_t)rlen;
}

int e2e_hand_open(struct e2e_hand *h, int family)
{
	memset(h, 0, sizeof *h);
	h->s = e2e_server_socket(family, E2E_REGION_DEFAULT);
	if (!h->s)
		return -1;
	h->c = e2e_socket(family, E2E_REGION_DEFAULT);
	if (!h->c)
		return -1;
	h->dest = e2e_sock_addr(h->s);
	h->req = e2e_alloc(HOMA_MAX_MESSAGE_LENGTH);
	h->resp = e2e_alloc(HOMA_MAX_MESSAGE_LENGTH);
	return 0;
}

int e2e_send(struct e2e_sock *s, const union sockaddr_in_union *dest,
	     const void *buf, size_t len, uint64_t cookie, uint64_t *id)
{
	struct homa_sendmsg_args args;
	struct iovec iov;
	struct msghdr h;
	int r;

	memset(&args, 0, sizeof args);
	memset(&h, 0, sizeof h);
	args.completion_cookie = cookie;
	iov.iov_base = (void *)buf;
	iov.iov_len = len;
	h.msg_name = (void *)dest;
	h.msg_namelen = dest->sa.sa_family == AF_INET6 ? sizeof dest->in6
						       : sizeof dest->in4;
	h.msg_iov = &iov;
	h.msg_iovlen = 1;
	h.msg_control = &args;
	h.msg_controllen = sizeof args;
	r = (int)homa_sendmsg(s->fd, &h, 0);
	if (id)
		*id = args.id;
	return r;
}

int e2e_reply(struct e2e_sock *s, const union sockaddr_in_union *dest,
	      uint64_t id, const void *buf, size_t len)
{
	struct homa_sendmsg_args args;
	struct iovec iov;
	struct msghdr h;

	memset(&args, 0, sizeof args);
	memset(&h, 0, sizeof h);
	args.id = id;
	iov.iov_base = (void *)buf;
	iov.iov_len = len;
	h.msg_name = (void *)dest;
	h.msg_namelen = dest->sa.sa_family == AF_INET6 ? sizeof dest->in6
						       : sizeof dest->in4;
	h.msg_iov = &iov;
	h.msg_iovlen = 1;
	h.msg_control = &args;
	h.msg_controllen = sizeof args;
	return (int)homa_sendmsg(s->fd, &h, 0);
}

int e2e_req_send(struct e2e_sock *s, const union sockaddr_in_union *dest,
		 struct e2e_req *r)
{
	uint8_t *buf = e2e_scratch(0);

	e2e_fill(buf, r->req_len, r->seed, r->resp_len, r->delay_ms);
	r->id = 0;
	r->done = 0;
	return e2e_send(s, dest, buf, r->req_len, r->cookie, &r->id);
}

int e2e_resp_check(const struct e2e_sock *s, const struct e2e_req *r,
		   const struct e2e_msg *m, char *why, size_t whylen)
{
	uint8_t *req = e2e_scratch(0), *want = e2e_scratch(1);
	uint8_t *got = e2e_scratch(2);
	size_t wlen;

	if (m->len < 0) {
		snprintf(why, whylen,
			 "RPC %llu (%zu-byte request) failed: errno %d (%s)",
			 (unsigned long long)r->id, r->req_len, m->err,
			 strerror(m->err));
		return -1;
	}
	if (m->id != r->id || m->cookie != r->cookie) {
		snprintf(why, whylen,
			 "got id %llu cookie %llx, want id %llu cookie %llx",
			 (unsigned long long)m->id,
			 (unsigned long long)m->cookie,
			 (unsigned long long)r->id,
			 (unsigned long long)r->cookie);
		return -1;
	}
	e2e_fill(req, r->req_len, r->seed, r->resp_len, r->delay_ms);
	wlen = e2e_make_response(req, r->req_len, r->srv_default, want);
	if ((size_t)m->len != wlen) {
		snprintf(why, whylen,
			 "RPC %llu: response of %zd bytes, want %zu",
			 (unsigned long long)r->id, m->len, wlen);
		return -1;
	}
	if (e2e_collect(s, m, got, why, whylen) != 0)
		return -1;
	for (size_t i = 0; i < wlen; i++) {
		if (got[i] != want[i]) {
			snprintf(why, whylen,
				 "RPC %llu: %zu-byte response differs at byte "
				 "%zu (got 0x%02x, want 0x%02x)",
				 (unsigned long long)r->id, wlen, i, got[i],
				 want[i]);
			return -1;
		}
	}
	return 0;
}

int e2e_rpc(struct e2e_sock *s, const union sockaddr_in_union *dest,
	    size_t req_len, uint32_t resp_len, uint32_t delay_ms,
	    uint64_t seed, size_t srv_default, char *why, size_t whylen)
{
	struct e2e_req r;
	struct e2e_msg m;
	int rc;

	memset(&r, 0, sizeof r);
	r.seed = seed;
	r.cookie = seed ^ 0xC00C1Eull;
	r.req_len = req_len;
	r.resp_len = resp_len;
	r.delay_ms = delay_ms;
	r.srv_default = srv_default;
	if (e2e_req_send(s, dest, &r) != 0) {
		snprintf(why, whylen, "sendmsg of %zu bytes: %s", req_len,
			 strerror(errno));
		return -1;
	}
	e2e_recv(s, r.id, HOMA_RECVMSG_RESPONSE, 0, &m);
	rc = e2e_resp_check(s, &r, &m, why, whylen);
	if (m.len >= 0)
		e2e_release(s, &m);
	return rc;
}

/* ------------------------------------------------------------------ */
/* Servers                                                             */
/* ------------------------------------------------------------------ */

/* Seed of the request that tells a server thread to exit ("STOPSTOP"). */
#define E2E_STOP_SEED 0x504F5453504F5453ull

/* Counts a problem of @srv and keeps the first description. */
static void problem(struct e2e_server *srv, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void problem(struct e2e_server *srv, const char *fmt, ...)
{
	va_list ap;

	pthread_mutex_lock(&srv->lock);
	if (atomic_fetch_add(&srv->problems, 1) == 0) {
		va_start(ap, fmt);
		vsnprintf(srv->first_problem, sizeof srv->first_problem, fmt,
			  ap);
		va_end(ap);
	}
	pthread_mutex_unlock(&srv->lock);
}

/* Body of a server thread (see e2e_server_start). */
static void *server_main(void *arg)
{
	struct e2e_server *srv = arg;
	struct e2e_bpages *ret = calloc(1, sizeof *ret);
	uint8_t *req = e2e_scratch(0), *resp = e2e_scratch(1);
	struct e2e_msg m;
	char why[200];

	if (!ret)
		return NULL;
	for (;;) {
		ssize_t n = e2e_recv_r(srv->sock, ret, 0, HOMA_RECVMSG_REQUEST,
				       0, &m);
		uint32_t delay;
		size_t rlen;

		if (n < 0) {
			if (m.err == EINTR)
				continue;
			if (atomic_load(&srv->stop) || m.err == ESHUTDOWN)
				break;
			problem(srv, "server recvmsg: errno %d (%s)", m.err,
				strerror(m.err));
			e2e_sleep_ms(5);
			continue;
		}
		pthread_mutex_lock(&srv->lock);
		srv->last_id = m.id;
		srv->last_peer = m.peer;
		srv->last_name = m.name;
		pthread_mutex_unlock(&srv->lock);
		if ((m.id & 1) == 0)
			problem(srv, "request with even id %llu",
				(unsigned long long)m.id);
		if (m.cookie != 0)
			problem(srv, "request with cookie %llx",
				(unsigned long long)m.cookie);
		if (e2e_collect(srv->sock, &m, req, why, sizeof why) != 0) {
			problem(srv, "request %llu: %s",
				(unsigned long long)m.id, why);
			e2e_release_r(ret, &m);
			/* Answer something wrong so that the client fails
			 * fast instead of waiting. */
			req[0] = 0;
			e2e_reply(srv->sock, &m.peer, m.id, req, 1);
			continue;
		}
		e2e_release_r(ret, &m);
		if (n >= 8 && e2e_seed_of(req, (size_t)n) == E2E_STOP_SEED)
			break;
		if (n >= 8) {
			size_t bad = e2e_verify(req, (size_t)n,
						e2e_seed_of(req, (size_t)n),
						e2e_hdr_resp_len(req, (size_t)n),
						e2e_hdr_delay_ms(req, (size_t)n));

			if (bad != SIZE_MAX)
				problem(srv, "request %llu of %zd bytes differs "
					"at byte %zu", (unsigned long long)m.id,
					n, bad);
		}
		delay = e2e_hdr_delay_ms(req, (size_t)n);
		if (!delay)
			delay = srv->default_delay_ms;
		if (delay)
			e2e_sleep_ms(delay);
		rlen = e2e_make_response(req, (size_t)n, srv->default_resp,
					 resp);
		/* Counted before the reply, so that a client holding the
		 * response sees it counted. */
		atomic_fetch_add(&srv->requests, 1);
		if (e2e_reply(srv->sock, &m.peer, m.id, resp, rlen) != 0) {
			int e = errno;

			if (atomic_load(&srv->stop) || e == ESHUTDOWN)
				break;
			problem(srv, "reply to %llu: errno %d (%s)",
				(unsigned long long)m.id, e, strerror(e));
		}
	}
	free(ret);
	return NULL;
}

struct e2e_server *e2e_server_start(int family, size_t region_len,
				    size_t default_resp,
				    unsigned default_delay_ms, int nthreads)
{
	struct e2e_server *srv = calloc(1, sizeof *srv);

	if (!srv || nthreads < 1 || nthreads > E2E_SERVER_MAX_THREADS) {
		free(srv);
		return NULL;
	}
	srv->sock = e2e_server_socket(family, region_len);
	if (!srv->sock) {
		free(srv);
		return NULL;
	}
	srv->default_resp = default_resp;
	srv->default_delay_ms = default_delay_ms;
	srv->nthreads = nthreads;
	pthread_mutex_init(&srv->lock, NULL);
	for (int i = 0; i < nthreads; i++) {
		if (pthread_create(&srv->threads[i], NULL, server_main, srv)
		    != 0) {
			atomic_store(&srv->stop, 1);
			homa_shutdown(srv->sock->fd, SHUT_RDWR);
			for (int j = 0; j < i; j++)
				pthread_join(srv->threads[j], NULL);
			e2e_sock_close(srv->sock);
			free(srv);
			return NULL;
		}
		srv->running[i] = 1;
	}
	reg_server(srv, 1);
	return srv;
}

/* Joins the still-running threads of @srv, waiting at most @ms in all;
 * returns how many are still running. */
static int join_for(struct e2e_server *srv, unsigned ms)
{
	struct timespec dl = tool_realtime_deadline(ms);
	int left = 0;

	for (int i = 0; i < srv->nthreads; i++) {
		if (!srv->running[i])
			continue;
		if (pthread_timedjoin_np(srv->threads[i], NULL, &dl) == 0)
			srv->running[i] = 0;
		else
			left++;
	}
	return left;
}

int e2e_server_stop(struct e2e_server *srv)
{
	struct e2e_sock *c;
	int left;

	if (!srv)
		return 0;
	reg_server(srv, 0);
	atomic_store(&srv->stop, 1);
	c = e2e_socket(srv->sock->family, 2 * HOMA_BPAGE_SIZE);
	if (c) {
		union sockaddr_in_union dest = e2e_sock_addr(srv->sock);
		uint8_t stop[16];

		for (int i = 0; i < srv->nthreads; i++) {
			uint64_t id;

			e2e_fill(stop, sizeof stop, E2E_STOP_SEED, 0, 0);
			e2e_send(c, &dest, stop, sizeof stop, 0, &id);
		}
	}
	left = join_for(srv, 2000);
	if (left) {
		homa_shutdown(srv->sock->fd, SHUT_RDWR);
		left = join_for(srv, 2000);
	}
	e2e_sock_close(c);
	if (left) {
		e2e_log("server on port %u: %d thread(s) would not exit; "
			"leaking it", srv->sock->port, left);
		unreg_sock(srv->sock);
		return -1;
	}
	e2e_sock_close(srv->sock);
	pthread_mutex_destroy(&srv->lock);
	free(srv);
	return 0;
}

union sockaddr_in_union e2e_server_addr(const struct e2e_server *srv)
{
	return e2e_sock_addr(srv->sock);
}

void e2e_server_problem(struct e2e_server *srv, char *buf, size_t len)
{
	pthread_mutex_lock(&srv->lock);
	snprintf(buf, len, "%s", srv->first_problem);
	pthread_mutex_unlock(&srv->lock);
}

/* See e2e_util.h. */
struct e2e_server *e2e_must_server(int family, size_t region_len,
				   size_t default_resp, int nthreads)
{
	struct e2e_server *srv = e2e_server_start(family, region_len,
						  default_resp, 0, nthreads);

	if (!srv)
		fail_msg("cannot start a server: %s", strerror(errno));
	return srv;
}

/* See e2e_util.h. */
void e2e_must_recv_responses(struct e2e_sock *s, struct e2e_req *r, int n)
{
	char why[256];

	for (int k = 0; k < n; k++) {
		struct e2e_msg m;
		int hit = -1;

		e2e_recv(s, 0, HOMA_RECVMSG_RESPONSE, 0, &m);
		if (m.len < 0)
			fail_msg("response %d: errno %d (%s) for id %llu", k,
				 m.err, strerror(m.err),
				 (unsigned long long)m.id);
		for (int i = 0; i < n; i++)
			if (r[i].id == m.id)
				hit = i;
		if (hit < 0)
			fail_msg("response with unknown id %llu",
				 (unsigned long long)m.id);
		if (r[hit].done)
			fail_msg("second response for RPC %d", hit);
		if (e2e_resp_check(s, &r[hit], &m, why, sizeof why) != 0)
			fail_msg("RPC %d: %s", hit, why);
		r[hit].done = 1;
		e2e_release(s, &m);
	}
}

/* See e2e_util.h. */
struct e2e_sock *e2e_must_socket(int family, size_t region_len)
{
	struct e2e_sock *c = e2e_socket(family, region_len);

	if (!c)
		fail_msg("cannot make a client socket: %s", strerror(errno));
	return c;
}
