// SPDX-License-Identifier: BSD-2-Clause
//
// grpc_bench - gRPC C++ over TCP on loopback, with the echo.Echo service of
// examples/rpc/echo.proto: the same measurements as rpc_bench (which runs
// this program in its rounds with --grpc, for one table):
//   - 100 B round trips, one at a time: p50, p99, p999 (microseconds);
//   - 100 B calls with 32 in flight (one completion queue): calls/s;
//   - 999,000-byte requests to Sink, one at a time: goodput (Gbit/s).
// Server (the synchronous API) and client run in this process.  Prints one
// line: "p50 p99 p999 rate gbps".
//
//   grpc_bench [--seconds S] [--port P]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include <grpcpp/grpcpp.h>

#include "echo.grpc.pb.h"

namespace {

constexpr size_t kSmall = 100;
constexpr size_t kLarge = 999000;
constexpr int kInFlight = 32;

using Clock = std::chrono::steady_clock;

// EchoImpl - the service: Say echoes text and payload, Sink the text only.
class EchoImpl final : public echo::Echo::Service {
	grpc::Status Say(grpc::ServerContext *, const echo::EchoRequest *in,
			 echo::EchoReply *out) override
	{
		out->set_text(in->text());
		out->set_payload(in->payload());
		return grpc::Status::OK;
	}

	grpc::Status Sink(grpc::ServerContext *, const echo::EchoRequest *in,
			  echo::EchoReply *out) override
	{
		out->set_text(in->text());
		return grpc::Status::OK;
	}
};

// seconds_since - seconds from t0 to now.
double seconds_since(Clock::time_point t0)
{
	return std::chrono::duration<double>(Clock::now() - t0).count();
}

// call - one synchronous call of Say (or Sink when sink); exits on failure.
void call(echo::Echo::Stub *stub, const echo::EchoRequest &req, bool sink)
{
	grpc::ClientContext ctx;
	echo::EchoReply reply;
	grpc::Status st = sink ? stub->Sink(&ctx, req, &reply)
			       : stub->Say(&ctx, req, &reply);

	if (!st.ok()) {
		std::fprintf(stderr, "grpc call: %s\n",
			     st.error_message().c_str());
		std::exit(1);
	}
}

// latency - kSmall-byte round trips for secs; p50, p99, p999 in us.
void latency(echo::Echo::Stub *stub, double secs, double out[3])
{
	echo::EchoRequest req;
	std::vector<double> us;
	auto t0 = Clock::now();

	req.set_payload(std::string(kSmall, 'x'));
	while (seconds_since(t0) < secs) {
		auto t = Clock::now();

		call(stub, req, false);
		us.push_back(std::chrono::duration<double, std::micro>(
				     Clock::now() - t).count());
	}
	std::sort(us.begin(), us.end());
	out[0] = us[us.size() / 2];
	out[1] = us[us.size() * 99 / 100];
	out[2] = us[us.size() * 999 / 1000];
}

// One asynchronous call.
struct AsyncCall {
	grpc::ClientContext ctx;
	echo::EchoReply reply;
	grpc::Status status;
	std::unique_ptr<grpc::ClientAsyncResponseReader<echo::EchoReply>> rpc;
};

// start - start one asynchronous Say of req on cq.
void start(echo::Echo::Stub *stub, const echo::EchoRequest &req,
	   grpc::CompletionQueue *cq)
{
	auto *c = new AsyncCall;

	c->rpc = stub->AsyncSay(&c->ctx, req, cq);
	c->rpc->Finish(&c->reply, &c->status, c);
}

// take - wait for one completion on cq; exits on failure.
void take(grpc::CompletionQueue *cq)
{
	void *tag;
	bool ok;

	if (!cq->Next(&tag, &ok) || !ok ||
	    !static_cast<AsyncCall *>(tag)->status.ok()) {
		std::fprintf(stderr, "grpc async call failed\n");
		std::exit(1);
	}
	delete static_cast<AsyncCall *>(tag);
}

// rate - calls/s of kSmall bytes with kInFlight outstanding.
double rate(echo::Echo::Stub *stub, double secs)
{
	grpc::CompletionQueue cq;
	echo::EchoRequest req;
	auto t0 = Clock::now();
	long done = 0;

	req.set_payload(std::string(kSmall, 'x'));
	for (int i = 0; i < kInFlight; i++)
		start(stub, req, &cq);
	while (seconds_since(t0) < secs) {
		take(&cq);
		done++;
		start(stub, req, &cq);
	}
	for (int i = 0; i < kInFlight; i++)
		take(&cq);
	cq.Shutdown();
	return done / seconds_since(t0);
}

// goodput - kLarge-byte requests to Sink for secs: Gbit/s of requests.
double goodput(echo::Echo::Stub *stub, double secs)
{
	echo::EchoRequest req;
	auto t0 = Clock::now();
	long n = 0;

	req.set_payload(std::string(kLarge, 'x'));
	while (seconds_since(t0) < secs) {
		call(stub, req, true);
		n++;
	}
	return n * double(kLarge) * 8 / seconds_since(t0) / 1e9;
}

} // namespace

int main(int argc, char **argv)
{
	double secs = 1.0;
	int port = 23100;
	double lat[3];

	for (int i = 1; i + 1 < argc; i += 2) {
		if (std::strcmp(argv[i], "--seconds") == 0)
			secs = std::atof(argv[i + 1]);
		else if (std::strcmp(argv[i], "--port") == 0)
			port = std::atoi(argv[i + 1]);
	}
	if (secs <= 0 || port < 1 || port > 65535 || argc % 2 == 0) {
		std::fprintf(stderr, "usage: %s [--seconds S] [--port P]\n",
			     argv[0]);
		return 2;
	}
	std::string addr = "127.0.0.1:" + std::to_string(port);
	EchoImpl service;
	grpc::ServerBuilder builder;

	builder.AddListeningPort(addr, grpc::InsecureServerCredentials());
	builder.RegisterService(&service);
	std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
	if (!server) {
		std::fprintf(stderr, "grpc_bench: cannot listen on %s\n",
			     addr.c_str());
		return 1;
	}
	auto stub = echo::Echo::NewStub(grpc::CreateChannel(
		addr, grpc::InsecureChannelCredentials()));

	latency(stub.get(), secs, lat);
	double r = rate(stub.get(), secs);
	double g = goodput(stub.get(), secs);
	std::printf("%.3f %.3f %.3f %.1f %.3f\n", lat[0], lat[1], lat[2], r,
		    g);
	server->Shutdown();
	return 0;
}
