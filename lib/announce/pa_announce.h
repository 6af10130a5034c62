/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef PA_ANNOUNCE_H
#define PA_ANNOUNCE_H

/**
 * @file
 * Readiness, drain and the announcement of the VIPs (docs/scale-out.md,
 * docs/operations.md "Drain").
 *
 * Three parts:
 * - A watchdog (struct pa_watchdog, pure): one loop counter per data-path
 *   lcore, sampled with the time; an lcore whose counter has not moved
 *   for stall_ms is stalled. Lcores that nap when idle (pipeline.idle
 *   "adaptive") still count a loop after every nap (at most
 *   idle.max_sleep_us, <= 10 ms), so a napping lcore is never stalled.
 * - Route messages (pa_announce_nl_*): rtnetlink RTM_NEWROUTE /
 *   RTM_DELROUTE / RTM_GETROUTE built into and parsed from plain buffers,
 *   and a netlink socket whose every wait for an answer is bounded.
 * - The readiness object (struct pa_ready, ready.c): readiness (ports'
 *   links up, tables loaded, every worker lcore making progress), drain,
 *   and the host routes (/32, /128, dev the first kernel_if, protocol
 *   PA_ANNOUNCE_RTPROT) of the VIPs and of the lb.fnat addresses that
 *   are no port's own, in kernel routing table announce.table, kept in
 *   step with the readiness, the drain and the LB's VIPs by
 *   pa_ready_poll() on the control thread; its RPC methods (health_get,
 *   health_set) in ready_rpc.c.
 *
 * Thread safety: pa_ready_poll(), the snapshot and the RPC methods run
 * on the control thread; pa_ready_set_started(),
 * pa_ready_set_stopping(), pa_ready_request_drain() and
 * pa_ready_routes() may be called from the main thread at any time
 * (atomics); create and destroy on the main thread while the control
 * thread is not running.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "pa_config.h"
#include "pa_net.h"

/**
 * The routing protocol number (rtm_protocol) of the appliance's routes:
 * 201, taken by no kernel, BIRD, FRR or iproute2 name
 * (/etc/iproute2/rt_protos). `ip route show table N proto 201`.
 */
#define PA_ANNOUNCE_RTPROT	201

#define PA_ANNOUNCE_NL_TIMEOUT_MS 100	/**< longest wait for a netlink answer */
#define PA_ANNOUNCE_RETRY_MS	1000	/**< after a failed route change */
#define PA_ANNOUNCE_REASSERT_MS	5000	/**< installed routes re-added (replace)
					 * this often: one deleted by hand comes back */
#define PA_READY_EVAL_MS	10	/**< readiness evaluated this often */
#define PA_READY_LINK_MS	100	/**< links read this often */
#define PA_READY_MAX_REASONS	16	/**< reasons kept (more are counted) */
#define PA_READY_REASON_LEN	96

/* ------------------------------------------------------------------ */
/* Watchdog                                                            */

#define PA_WATCHDOG_MAX		128	/**< lcores watched */

/** Loop counters of the data-path lcores and when each last moved. */
struct pa_watchdog {
	unsigned int n;
	uint32_t stall_ms;
	bool primed;			/**< one sample taken */
	uint64_t count[PA_WATCHDOG_MAX];
	uint64_t moved_ms[PA_WATCHDOG_MAX]; /**< last time count changed */
	uint64_t stalls[PA_WATCHDOG_MAX]; /**< times it became stalled */
	bool stalled[PA_WATCHDOG_MAX];
};

/** Watch @p n lcores (at most PA_WATCHDOG_MAX) with @p stall_ms. */
void pa_watchdog_init(struct pa_watchdog *wd, unsigned int n,
		uint32_t stall_ms);

/**
 * Take one sample: @p counts[i] the loop counter of lcore i at @p now_ms.
 * The first sample only primes (nobody is stalled before it).
 * @return lcores stalled now (stalled[i], and for how long:
 *         pa_watchdog_stalled_ms()).
 */
unsigned int pa_watchdog_update(struct pa_watchdog *wd,
		const uint64_t *counts, uint64_t now_ms);

/** Milliseconds lcore @p i has not moved at @p now_ms (0 when it did). */
uint64_t pa_watchdog_stalled_ms(const struct pa_watchdog *wd,
		unsigned int i, uint64_t now_ms);

/* ------------------------------------------------------------------ */
/* Route messages (rtnetlink)                                          */

/** One host route as the kernel states it. */
struct pa_announce_route {
	struct pa_ip_addr dst;
	uint8_t dst_len;		/**< 32 or 128 for ours */
	uint32_t table;			/**< RTA_TABLE (or rtm_table) */
	uint8_t protocol;		/**< rtm_protocol */
	uint32_t oif;			/**< RTA_OIF, 0 when absent */
};

/**
 * Build a RTM_NEWROUTE (create or replace) or RTM_DELROUTE request for
 * @p r (a unicast host route through interface r->oif) into @p buf.
 * @param type  RTM_NEWROUTE or RTM_DELROUTE
 * @return the message's length, or 0 when it does not fit or @p type or
 *         the family is not one of those.
 */
size_t pa_announce_nl_route_msg(void *buf, size_t len, int type,
		const struct pa_announce_route *r, uint32_t seq);

/** Build a RTM_GETROUTE dump request of family @p family (AF_INET or
 * AF_INET6). @return its length or 0. */
size_t pa_announce_nl_dump_msg(void *buf, size_t len, int family,
		uint32_t seq);

/**
 * Read a RTM_NEWROUTE message of a dump (@p msg_len bytes at @p nh).
 * @return 0 with @p out filled, -ENOENT for another message type or a
 *         route that is not a unicast route with a destination, -EINVAL
 *         when malformed.
 */
int pa_announce_nl_parse_route(const void *nh, size_t msg_len,
		struct pa_announce_route *out);

/**
 * Find the answer to request @p seq in the @p len bytes received.
 * @return 0 (acknowledged), -errno (the kernel's refusal), -EAGAIN (no
 *         answer to @p seq there), -EPROTO (malformed).
 */
int pa_announce_nl_ack(const void *buf, size_t len, uint32_t seq);

/** A NETLINK_ROUTE socket (answers waited for at most timeout_ms). */
struct pa_announce_nl {
	int fd;
	uint32_t seq;
	int timeout_ms;
};

/** @return 0 or -errno. */
int pa_announce_nl_open(struct pa_announce_nl *nl, int timeout_ms);
void pa_announce_nl_close(struct pa_announce_nl *nl);

/**
 * Add (replace) or delete route @p r and wait for the kernel's answer.
 * Deleting a route that is not there is success.
 * @return 0, -errno (the kernel's) or -ETIMEDOUT.
 */
int pa_announce_nl_route(struct pa_announce_nl *nl, int type,
		const struct pa_announce_route *r);

/**
 * Delete every route of protocol @p protocol in table @p table (both
 * families): the routes a killed daemon left.
 * @param removed  receives how many were deleted (may be NULL)
 * @return 0 or -errno.
 */
int pa_announce_nl_flush(struct pa_announce_nl *nl, uint32_t table,
		uint8_t protocol, unsigned int *removed);

/* ------------------------------------------------------------------ */
/* The "announce" section and pipeline.stall_ms                        */

/** Bounds of "announce". Tables 0 (unspec), 253 (default), 254 (main)
 * and 255 (local) are refused. */
#define PA_ANNOUNCE_MAX_DRAIN_S	3600

/** Index of the port whose kernel_if carries the routes (the first port
 * with one), or -1. */
int pa_announce_port(const struct pa_config *cfg);

/* ------------------------------------------------------------------ */
/* Health                                                              */

struct pa_port_set;
struct pa_pipeline;
struct pa_lb;
struct pa_ready;

struct pa_ready_opts {
	/** announce, pipeline.stall_ms, the ports' kernel_if. Borrowed. */
	const struct pa_config *cfg;
	const struct pa_port_set *ports;	/**< links */
	struct pa_pipeline *pl;			/**< lcores' loop counters */
	struct pa_lb *lb;			/**< VIPs, services */
	/** Tables built (the ACL and the LB exist). */
	bool tables_loaded;
	/** Keep routes (live mode with "announce"); false: readiness only. */
	bool announce;
};

/**
 * Create the readiness object; with announce, open the netlink socket and
 * remove the stale routes (PA_ANNOUNCE_RTPROT in announce.table) a
 * killed daemon left.
 * @return it, or NULL with the reason in @p err.
 */
struct pa_ready *pa_ready_create(const struct pa_ready_opts *o,
		char *err, size_t err_len);

/** Withdraw every route this object added (bounded waits), free. NULL
 * is fine. Main thread, the control thread stopped. */
void pa_ready_destroy(struct pa_ready *h);

/** The data path runs (lcores launched). Any thread. */
void pa_ready_set_started(struct pa_ready *h);

/** The daemon stops: withdraw at the next poll. Any thread. */
void pa_ready_set_stopping(struct pa_ready *h);

/** SIGTERM: drain (withdraw, keep forwarding). Any thread. */
void pa_ready_request_drain(struct pa_ready *h);

/** Routes in the kernel table now (0 once withdrawn). Any thread. */
unsigned int pa_ready_routes(const struct pa_ready *h);

/**
 * The main thread's backstop for a control thread that cannot withdraw:
 * a table update waits for every lcore to pass a quiescent state (RCU),
 * so a stalled lcore also blocks the control thread in the next RPC that
 * changes a table. When the control thread has not polled for stall_ms
 * and an lcore has not moved for stall_ms either (watched here, on a
 * watchdog of the main thread's own), or when @p force, the routes of
 * PA_ANNOUNCE_RTPROT in the table are flushed from here (a netlink
 * socket of this thread's own) and the control thread, once it runs
 * again, re-adds what it should. Main thread, every few ms.
 * @return true when it flushed.
 */
bool pa_ready_backstop(struct pa_ready *h, uint64_t now_ms, bool force);

/** health_set: drain or undrain. Control thread. */
void pa_ready_set_draining(struct pa_ready *h, bool draining);

/**
 * Evaluate readiness (every PA_READY_EVAL_MS) and bring the routes in
 * step. Control thread. NULL is fine.
 * @return milliseconds until it is due again.
 */
int pa_ready_poll(struct pa_ready *h, uint64_t now_ms);

/** What health_get, /health and /metrics report. */
struct pa_ready_snapshot {
	bool ready;
	bool draining;
	bool announce;			/**< routes are kept */
	uint32_t table;
	unsigned int routes;		/**< in the kernel table now */
	unsigned int vips;		/**< distinct VIPs of the services */
	/** lb.fnat addresses that are no port's (announced like VIPs) */
	unsigned int pool_addrs;
	uint64_t route_adds;		/**< routes added */
	uint64_t route_deletes;		/**< routes withdrawn */
	uint64_t route_errors;		/**< netlink requests that failed */
	uint64_t route_reasserts;	/**< installed routes re-added (replace) */
	uint64_t stale_removed;		/**< stale routes removed at start */
	uint64_t not_ready_transitions;	/**< ready -> not ready */
	uint64_t backstop_flushes;	/**< pa_ready_backstop() withdrew */
	unsigned int n_lcores;
	unsigned int lcore_id[PA_WATCHDOG_MAX];
	bool lcore_stalled[PA_WATCHDOG_MAX];
	uint64_t lcore_stalls[PA_WATCHDOG_MAX];
	unsigned int n_reasons;
	char reasons[PA_READY_MAX_REASONS][PA_READY_REASON_LEN];
};

/** Fill @p s. Control thread. */
void pa_ready_snapshot(const struct pa_ready *h,
		struct pa_ready_snapshot *s);

/**
 * The result of health_get: {"ready", "draining", "reasons", "services":
 * {NAME: {"vip", "port", "proto", "backends", "usable_backends",
 * "announced"}}, "lcores": {...}, "announce": {...} or null}.
 * Control thread. @return new reference or NULL.
 */
json_t *pa_ready_json(struct pa_ready *h);

/**
 * The body and code of GET /health: 200 "ready\n" when ready and not
 * draining, else 503 with the reasons, one a line.
 * @param text  malloc'd
 * @return 0 or -ENOMEM.
 */
int pa_ready_http(struct pa_ready *h, char **text, size_t *len,
		unsigned int *code);

#endif /* PA_ANNOUNCE_H */
