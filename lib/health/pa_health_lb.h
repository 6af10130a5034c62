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
 * - Runs on the control thread: pa_health_lb_fd(), _timeout_ms(), _run().
 *   Not in replay mode (the application does not create it): a replay's
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
	unsigned int max_inflight;	/**< 0: PA_HEALTH_DEF_MAX_INFLIGHT */
};

/** @return it, or NULL with the reason in @p err. */
struct pa_health_lb *pa_health_lb_create(const struct pa_health_lb_opts *o,
		char *err, size_t err_len);

/** Close the probes and free. NULL is fine. */
void pa_health_lb_destroy(struct pa_health_lb *x);

/** The fd the control thread polls for readability (-1 for NULL). */
int pa_health_lb_fd(const struct pa_health_lb *x);

/** The control thread's longest wait for the checks, ms (-1: none). */
int pa_health_lb_timeout_ms(const struct pa_health_lb *x);

/** Follow the LB's changes, serve the probes, report their verdicts.
 * Control thread; never blocks (a verdict that changes a table waits for
 * its RCU publication, as an RPC does). NULL is fine. */
void pa_health_lb_run(struct pa_health_lb *x);

/** The prober's counters, and how many backends had no port to probe
 * from. */
struct pa_health_lb_snapshot {
	struct pa_health_stats probe;
	uint64_t no_source;		/**< backends not probed: no kernel_if
					 * with an address of their family */
	uint64_t syncs;			/**< target set re-read */
};

void pa_health_lb_snapshot(const struct pa_health_lb *x,
		struct pa_health_lb_snapshot *s);

/**
 * {"targets", "up", "down", "unknown", "inflight", "probes",
 *  "results": {"ok": N, "refused": N, ...}, "deferred", "transitions",
 *  "no_source"}: the "health" object of stats_get.
 * @return new reference, or NULL on allocation failure.
 */
json_t *pa_health_lb_snapshot_json(const struct pa_health_lb_snapshot *s);

extern int pa_health_logtype;

#endif /* PA_HEALTH_LB_H */
