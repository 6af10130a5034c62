/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The control thread: the JSON-RPC server, the metrics HTTP server, the
 * telemetry mailbox, the neighbour timers, readiness and the announced
 * routes (lib/announce) in one poll loop. The backends' health checks
 * (lib/health, pa_health_lb_start()) and the exception path's TAP I/O
 * (lib/excp, pa_excp_start()) have threads of their own: neither a round
 * of probes nor a stream of the kernel's frames delays an RPC.
 */
#include <poll.h>

#include "app.h"
#include "pa_clock.h"

#define CTRL_POLL_MS		50	/* RPC polled at least this often */
#define NEIGH_POLL_MS		10	/* control wait between neighbour polls */
#define MAX_FDS			3

void *
pa_app_ctrl_main(void *arg)
{
	struct pa_app_ctrl *t = arg;
	struct pollfd pfd[MAX_FDS];
	int n, timeout, ht;

	while (!t->stop) {
		n = 0;
		if (t->server != NULL)
			pfd[n++] = (struct pollfd){
				.fd = pa_rpc_server_fd(t->server), .events = POLLIN };
		if (t->http != NULL)
			pfd[n++] = (struct pollfd){
				.fd = pa_metrics_http_fd(t->http), .events = POLLIN };
		if (t->telemetry)
			pfd[n++] = (struct pollfd){
				.fd = pa_metrics_telemetry_fd(), .events = POLLIN };
		timeout = t->neigh != NULL ? NEIGH_POLL_MS : CTRL_POLL_MS;
		if (t->http != NULL) {
			ht = pa_metrics_http_timeout_ms(t->http);
			if (ht >= 0 && ht < timeout)
				timeout = ht;
		}
		ht = pa_ready_poll(t->ready, (uint64_t)pa_clock_ms());
		if (t->ready != NULL && ht < timeout)
			timeout = ht;
		(void)poll(pfd, (nfds_t)n, timeout);	/* EINTR: go round */
		if (t->neigh != NULL)
			pa_neigh_poll(t->neigh, pa_neigh_now_ms());
		/* the RPC server is polled at least every CTRL_POLL_MS, as
		 * when it had the thread to itself */
		if (t->server != NULL && pa_rpc_server_poll(t->server, 0) < 0)
			break;
		if (t->http != NULL)
			pa_metrics_http_run(t->http);
		if (t->telemetry)
			pa_metrics_telemetry_run();
		/* readiness and the routes: after the RPCs that may have
		 * changed the VIPs or the drain */
		(void)pa_ready_poll(t->ready, (uint64_t)pa_clock_ms());
	}
	return NULL;
}
