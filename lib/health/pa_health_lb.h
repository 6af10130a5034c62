/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef PA_HEALTH_LB_H
#define PA_HEALTH_LB_H

/**
 * @file
 * Health checks of the load balancer's backends: the prober (pa_health.h)
 * kept in step with the LB's services, its verdicts reported to the LB
 * (pa_lb_backend_health()), which takes a backend down by health out of
 * its table.
 *
 * - Targets: every backend of every service whose "health" has a type
 *   other than "none" (pa_lb_health_targets()), keyed by the backend's
 *   counter slot and uid; re-read whenever pa_lb_config_version() changes
 *   (services or backends added, deleted, changed).
 * - What is probed: the backend's address, on health.port or else the
 *   backend's port (its own "port", else the service's), whatever the
 *   forwarding method (a dsr backend holds the VIP, but its own address
 *   is what tells whether the host serves).
 * - Where from: the appliance's own address, through its own port: the
 *   sockets are bound to a port's kernel_if (SO_BINDTODEVICE) and to that
 *   port's address of the target's family, the port whose subnet holds
 *   the backend first, else the first port with a kernel_if and an
 *   address of that family (the kernel_if's routes then decide; the
 *   operator gives the kernel a route, as for any traffic of its own).
 * - Runs on a thread of its own, "pa-health" (pa_health_lb_start(): a
 *   plain pthread with the control threads' CPU affinity, never on a
 *   data-path lcore), so that a burst of probes never queues the RPCs,
 *   the metrics and the exception path of the control thread behind it.
 *   The thread reports each probe to the LB (pa_lb_backend_health(),
 *   pa_lb_backend_agent(): under the LB's lock, a few stores) and builds
 *   and publishes the tables they change (pa_lb_health_publish(): at
 *   most one per service every PA_LB_HEALTH_PUBLISH_GAP_MS); an RPC that
 *   needs the LB's lock meanwhile waits for that build, as it would
 *   behind another RPC. Without pa_health_lb_start() the caller drives
 *   it instead (pa_health_lb_fd(), _timeout_ms(), _run(), all from one
 *   thread: the unit tests).
 * - Not in replay mode (the application does not create it): a replay's
 *   outcome depends only on its packets, every backend's health stays
 *   "unknown", which counts as up.
 */

#include <stdint.h>

#include <jansson.h>

#include "pa_config.h"
#include "pa_health.h"
#include "pa_lb.h"

struct pa_health_lb;

struct pa_health_lb_opts {
	struct pa_lb *lb;		/**< borrowed */
	/** The ports' kernel_if names and addresses. Borrowed. */
	const struct pa_config *cfg;
	unsigned int max_inflight;	/**< 0: sized from the targets
					 * (pa_health.h) */
};

/** @return it, or NULL with the reason in @p err. */
struct pa_health_lb *pa_health_lb_create(const struct pa_health_lb_opts *o,
		char *err, size_t err_len);

/**
 * Run the checks on their own thread ("pa-health", created with
 * rte_ctrl_thread_create()) until pa_health_lb_stop(). Main thread.
 * NULL is fine (nothing). @return 0, or -errno with the reason in @p err.
 */
int pa_health_lb_start(struct pa_health_lb *x, char *err, size_t err_len);

/** Stop the thread and join it (within a poll: it is woken by an
 * eventfd). Nothing if it was not started. Main thread. */
void pa_health_lb_stop(struct pa_health_lb *x);

/** Stop the thread if it runs, close the probes' sockets and free. NULL
 * is fine. */
void pa_health_lb_destroy(struct pa_health_lb *x);

/** Without the thread: the fd to poll for readability (-1 for NULL). */
int pa_health_lb_fd(const struct pa_health_lb *x);

/** Without the thread: the longest wait for the checks, ms (-1: none). */
int pa_health_lb_timeout_ms(const struct pa_health_lb *x);

/** Follow the LB's changes, serve the probes, report their verdicts.
 * The checks' thread (or, without it, the caller's); never blocks (a
 * verdict that changes a table waits for its RCU publication, as an RPC
 * does). NULL is fine. */
void pa_health_lb_run(struct pa_health_lb *x);

/** The prober's counters, and how many backends had no port to probe
 * from. */
struct pa_health_lb_snapshot {
	struct pa_health_stats probe;
	uint64_t no_source;		/**< backends not probed: no kernel_if
					 * with an address of their family */
	uint64_t syncs;			/**< target set re-read */
};

/** The counters as of the checks' last round. Any thread (a copy under
 * a mutex). */
void pa_health_lb_snapshot(const struct pa_health_lb *x,
		struct pa_health_lb_snapshot *s);

/**
 * {"targets", "up", "down", "unknown", "inflight", "waiting", "probes",
 *  "results": {"ok": N, "refused": N, ...}, "deferred", "transitions",
 *  "no_source"}: the "health" object of stats_get.
 * @return new reference, or NULL on allocation failure.
 */
json_t *pa_health_lb_snapshot_json(const struct pa_health_lb_snapshot *s);

extern int pa_health_logtype;

#endif /* PA_HEALTH_LB_H */
