/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * kapi_wmem - the send-memory limit of the Linux kernel Homa API (the
 * wmem_max sysctl; on libhoma the wmem_max setting, HOMA_WMEM_MAX), with
 * nothing but libc (on libhoma: under LD_PRELOAD=libhoma_preload.so).
 *
 *   usage: kapi_wmem PORT
 *
 * A server socket on PORT takes requests and never answers; a client
 * socket sends 50,000-byte requests to it.  Checked:
 *   - the client is writable (POLLOUT) at first;
 *   - sendmsg with MSG_DONTWAIT succeeds until the socket holds wmem_max
 *     bytes, then fails with EAGAIN (at most 4,000 requests: 200 MB, past
 *     the kernel's default of 100 MB);
 *   - the socket is then not writable: poll and epoll report no POLLOUT;
 *     sendmsg without MSG_DONTWAIT on the socket made O_NONBLOCK (fcntl)
 *     fails with EAGAIN too;
 *   - a blocking sendmsg (in a second thread) waits: the thread sleeps and
 *     the call does not return; HOMAIOCABORT of every RPC, followed by a
 *     nonblocking recvmsg (EAGAIN: nothing to receive), frees the memory
 *     and the waiting sendmsg then succeeds; the socket is writable again
 *     (POLLOUT within 5 s).  The recvmsg is what an application's receive
 *     loop does anyway, and the kernel module needs it: it frees the
 *     memory of ended RPCs when the socket is next used (a recvmsg, a
 *     packet for it) or when many have piled up, not when they end, so
 *     without it the waiting sendmsg would sleep for ever;
 *   - filled again, a waiting sendmsg is woken by shutdown with
 *     ESHUTDOWN.
 * Prints "kapi_wmem: PASS" and exits 0, else "FAIL ..." and exits 1.
 * Run it with a small limit (HOMA_WMEM_MAX=100000 on libhoma) to keep it
 * quick.
 */
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/epoll.h>
#include <sys/syscall.h>
#include <fcntl.h>
#include <time.h>

#include "kapi_util.h"

#define REQ_LEN 50000
#define MAX_REQS 4000

static struct kapi_sock srv, cli;
static struct sockaddr_storage dest;
static socklen_t dlen;
static char req[REQ_LEN];

/* send_req - one request from the client with sendmsg flags; returns
 * sendmsg's result (errno set on -1). */
static int send_req(int flags)
{
	struct homa_sendmsg_args args = { .id = 0 };
	struct iovec v = { .iov_base = req, .iov_len = REQ_LEN };
	struct msghdr msg;

	memset(&msg, 0, sizeof(msg));
	msg.msg_name = &dest;
	msg.msg_namelen = dlen;
	msg.msg_iov = &v;
	msg.msg_iovlen = 1;
	msg.msg_control = &args;
	return (int)sendmsg(cli.fd, &msg, flags);
}

/* writable - the client reports POLLOUT now (poll, no wait). */
static bool writable(void)
{
	struct pollfd p = { .fd = cli.fd, .events = POLLOUT };

	CHECK(poll(&p, 1, 0) >= 0, "poll: %s", strerror(errno));
	return (p.revents & POLLOUT) != 0;
}

/* writable_within - the client reports POLLOUT within ms milliseconds: a
 * socket frees the memory of aborted RPCs as it reaps them, which the
 * kernel module does in the background, so POLLOUT may come a little after
 * HOMAIOCABORT returns. */
static bool writable_within(int ms)
{
	struct pollfd p = { .fd = cli.fd, .events = POLLOUT };

	CHECK(poll(&p, 1, ms) >= 0, "poll: %s", strerror(errno));
	return (p.revents & POLLOUT) != 0;
}

/* fill - nonblocking requests until EAGAIN; returns how many went. */
static int fill(void)
{
	int n = 0;

	while (n < MAX_REQS && send_req(MSG_DONTWAIT) == 0)
		n++;
	CHECK(n < MAX_REQS, "%d requests sent without reaching the limit",
	      n);
	CHECK(errno == EAGAIN, "sendmsg(MSG_DONTWAIT) at the limit: %s, "
	      "want EAGAIN", strerror(errno));
	return n;
}

/* A blocking sendmsg in a second thread. */
struct sender {
	pthread_t thread;
	atomic_int tid;
	atomic_int done;
	int result, err;
};

/* sender_main - one blocking request. */
static void *sender_main(void *arg)
{
	struct sender *sd = arg;

	atomic_store(&sd->tid, (int)syscall(SYS_gettid));
	sd->result = send_req(0);
	sd->err = errno;
	atomic_store(&sd->done, 1);
	return NULL;
}

/* thread_state - the scheduler state letter of thread tid, 0 if unknown. */
static char thread_state(int tid)
{
	char path[64], buf[512], *p;
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", tid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	p = strrchr(buf, ')');
	return p && p[1] == ' ' ? p[2] : 0;
}

/* start_sender - start sd and wait (up to 5 s) until it sleeps inside a
 * sendmsg that has not returned. */
static void start_sender(struct sender *sd)
{
	struct timespec ms = { 0, 1000000 };
	int i;

	memset(sd, 0, sizeof(*sd));
	CHECK(pthread_create(&sd->thread, NULL, sender_main, sd) == 0,
	      "pthread_create");
	for (i = 0; i < 5000; i++) {
		if (atomic_load(&sd->done) || (atomic_load(&sd->tid) &&
		    thread_state(atomic_load(&sd->tid)) == 'S'))
			break;
		nanosleep(&ms, NULL);
	}
	CHECK(!atomic_load(&sd->done), "a blocking sendmsg at the limit "
	      "returned %d (%s)", sd->result, strerror(sd->err));
	CHECK(thread_state(atomic_load(&sd->tid)) == 'S',
	      "the blocking sendmsg is not asleep");
}

/* abort_all - HOMAIOCABORT of every client RPC, silently, then a
 * nonblocking recvmsg that finds nothing (it lets the kernel module free
 * the aborted RPCs' memory, see the head comment). */
static void abort_all(void)
{
	struct homa_recvmsg_args args;
	struct homa_abort_args a;

	memset(&a, 0, sizeof(a));
	CHECK(ioctl(cli.fd, HOMAIOCABORT, &a) == 0, "HOMAIOCABORT: %s",
	      strerror(errno));
	memset(&args, 0, sizeof(args));
	EXPECT_ERR(kapi_recv(cli.fd, &args, MSG_DONTWAIT, NULL, NULL), EAGAIN,
		   "recvmsg(MSG_DONTWAIT) after aborting every RPC");
}

/* step - say which step begins (a run that hangs shows where). */
static void step(const char *what)
{
	printf("kapi_wmem: %s\n", what);
	fflush(stdout);
}

int main(int argc, char **argv)
{
	int port = kapi_port(argc, argv, 1, 4500);
	struct epoll_event ev = { .events = EPOLLOUT }, out;
	struct sender sd;
	int ep, n;

	srv = kapi_open(AF_INET, port, 0);
	cli = kapi_open(AF_INET, 0, 0);
	dlen = kapi_addr(AF_INET, port, &dest);
	kapi_fill(req, sizeof(req), 1);
	ep = epoll_create1(0);
	CHECK(ep >= 0 && epoll_ctl(ep, EPOLL_CTL_ADD, cli.fd, &ev) == 0,
	      "epoll: %s", strerror(errno));

	step("filling the send memory");
	CHECK(writable(), "a new socket is not writable");
	n = fill();
	CHECK(!writable(), "POLLOUT at the limit (%d requests)", n);
	CHECK(epoll_wait(ep, &out, 1, 0) == 0, "EPOLLOUT at the limit");
	CHECK(fcntl(cli.fd, F_SETFL, O_NONBLOCK) == 0, "F_SETFL: %s",
	      strerror(errno));
	EXPECT_ERR(send_req(0), EAGAIN, "sendmsg on an O_NONBLOCK socket at "
		   "the limit");
	CHECK(fcntl(cli.fd, F_SETFL, 0) == 0, "F_SETFL: %s", strerror(errno));

	step("a blocking sendmsg waits; every RPC aborted");
	start_sender(&sd);
	abort_all();
	CHECK(pthread_join(sd.thread, NULL) == 0, "pthread_join");
	CHECK(sd.result == 0, "the waiting sendmsg after the abort: %s",
	      strerror(sd.err));
	CHECK(writable_within(5000), "not writable within 5 s after the "
	      "abort freed memory");
	CHECK(epoll_wait(ep, &out, 1, 1000) == 1 && (out.events & EPOLLOUT),
	      "no EPOLLOUT after the abort freed memory");

	step("filled again; a blocking sendmsg waits; shutdown");
	fill();
	start_sender(&sd);
	CHECK(shutdown(cli.fd, SHUT_RDWR) == 0, "shutdown: %s",
	      strerror(errno));
	CHECK(pthread_join(sd.thread, NULL) == 0, "pthread_join");
	CHECK(sd.result == -1 && sd.err == ESHUTDOWN, "the waiting sendmsg "
	      "after shutdown: %d (%s), want ESHUTDOWN", sd.result,
	      strerror(sd.err));

	close(ep);
	kapi_close(&cli);
	kapi_close(&srv);
	printf("kapi_wmem: PASS (%d requests of %d bytes reached the "
	       "limit)\n", n, REQ_LEN);
	return 0;
}
