/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef PA_HEALTH_H
#define PA_HEALTH_H

/**
 * @file
 * The health prober: checks of many targets (address, port, kind) with
 * non-blocking kernel sockets and timers, on the caller's thread.
 *
 * No DPDK and no thread of its own: the caller (the control thread)
 * polls pa_health_fd() with pa_health_timeout_ms() and calls
 * pa_health_run() with the time, which it reads from whatever clock it
 * likes (the unit tests use a fake one). Every call of one prober is
 * from the same thread.
 *
 * - Targets live in slots 0..max_targets-1 chosen by the caller
 *   (lib/lb's backend counter slots): pa_health_set() adds or changes
 *   one, pa_health_clear() removes it.
 * - Each target is probed every interval_ms; a target's first probe
 *   comes at a phase of the interval drawn from its slot, so targets
 *   added together are spread over the interval, not probed at once.
 *   Its probes keep to that grid (first probe + k intervals) whatever
 *   their latency or a late start (waiting for a socket, a late call of
 *   pa_health_run()): no drift, interval_ms is the period. A probe that
 *   started a whole interval late or more skips the places it missed
 *   (the next one is the grid's next after its start), so a late target
 *   is never probed twice in a row.
 * - A probe lasts at most timeout_ms (< interval_ms). Its kinds
 *   (enum pa_health_type): tcp, a connect; http, a connect then "GET
 *   path HTTP/1.0" and the status line; udp, a datagram on a connected
 *   socket, failed by an ICMP port unreachable (ECONNREFUSED) or, with
 *   "expect", by no reply containing it; icmp, an echo request (ping
 *   socket, else raw socket) answered by an echo reply. TCP sockets are
 *   closed with a reset (no TIME_WAIT) and bound with
 *   IP_BIND_ADDRESS_NO_PORT, so that many probes from one source
 *   address do not run out of ports.
 * - Sockets: bound to the target's interface (SO_BINDTODEVICE) and
 *   source address when given. At most max_inflight probes at once (file
 *   descriptors bounded): a due probe beyond that waits on a list,
 *   oldest first, and starts as soon as a probe ends (counted once in
 *   "deferred"; "waiting" now); its next probe keeps to its grid.
 *   max_inflight 0 (the default) sizes the limit from the targets: the
 *   sum over them of timeout_ms / interval_ms (the probes in flight at
 *   once if every probe lasted its whole timeout), an eighth more and
 *   16, at least 64, at most PA_HEALTH_AUTO_MAX_INFLIGHT and RLIMIT_NOFILE
 *   (as at pa_health_create()) less 256 file descriptors left to the
 *   rest of the process. 1,000 targets every 1000 ms with a 500 ms
 *   timeout: 579; 10,000: 2,048 (5,652 without the ceiling).
 * - PA_HEALTH_AGENT (not a configuration "type": "agent_port"): the
 *   HAProxy agent-check protocol. A connect to the agent's port; the
 *   agent writes one line and closes; tokens (space or comma separated)
 *   "NN%" (a weight percentage, 0..100), "up"/"ready", "drain",
 *   "down"/"fail"/"failed"/"stopped"/"maint", others ignored. A line
 *   with none of them is "bad_reply". The percentage is quantized to
 *   10 % steps (a non-zero one to at least 10 %) and taken only once the
 *   same step was reported rise times in a row, so that two appliances
 *   reading the same agent settle on the same weight (and build the same
 *   table) and a jittery agent does not rebuild tables at every probe;
 *   the state is taken at once.
 * - Status: unknown until rise passes or fall failures in a row; then
 *   up after rise passes in a row, down after fall failures in a row.
 *   Every change calls on_change (from pa_health_run()).
 */

#include <stdbool.h>
#include <stdint.h>

#include "pa_config.h"
#include "pa_net.h"

/** A target's verdict. */
enum pa_health_status {
	PA_HEALTH_STATUS_UNKNOWN = 0,	/**< not decided yet (counts as up) */
	PA_HEALTH_STATUS_UP,
	PA_HEALTH_STATUS_DOWN,
};

/** How a probe ended. */
enum pa_health_result {
	PA_HEALTH_R_NONE = 0,		/**< no probe has ended yet */
	PA_HEALTH_R_OK,
	PA_HEALTH_R_REFUSED,		/**< TCP reset, ICMP port unreachable */
	PA_HEALTH_R_TIMEOUT,		/**< no answer within timeout_ms */
	PA_HEALTH_R_UNREACHABLE,	/**< no route, host/net unreachable */
	PA_HEALTH_R_BAD_STATUS,		/**< http: another status code */
	PA_HEALTH_R_BAD_REPLY,		/**< http: no status line; udp: reply
					 * without "expect" */
	PA_HEALTH_R_ERROR,		/**< a local error (socket, bind...) */
	PA_HEALTH_R_MAX
};

#define PA_HEALTH_IFNAME_MAX	16

/** What to probe and how. */
struct pa_health_spec {
	enum pa_health_type type;	/**< not PA_HEALTH_NONE */
	struct pa_ip_addr addr;		/**< the target */
	uint16_t port;			/**< tcp, http, udp */
	/** Source address (family 0: the kernel chooses). */
	struct pa_ip_addr src;
	/** Interface the probes leave through ("": the kernel chooses). */
	char ifname[PA_HEALTH_IFNAME_MAX];
	char path[PA_CONFIG_HEALTH_PATH_MAX];	/**< http */
	uint16_t expect_status;		/**< http */
	char expect[PA_CONFIG_HEALTH_EXPECT_MAX];	/**< udp, "" = none */
	uint32_t interval_ms;
	uint32_t timeout_ms;		/**< < interval_ms */
	uint16_t rise;			/**< >= 1 */
	uint16_t fall;			/**< >= 1 */
};

/** What a backend's agent said of itself (agent checks). */
enum pa_health_agent_state {
	PA_HEALTH_AGENT_NONE = 0,	/**< nothing said (yet) */
	PA_HEALTH_AGENT_UP,		/**< "up", "ready" */
	PA_HEALTH_AGENT_DRAIN,		/**< "drain": keep flows, take no new */
	PA_HEALTH_AGENT_DOWN,		/**< "down", "fail", "failed",
					 * "stopped", "maint" */
};

/** A target's state (pa_health_get(), on_change). */
struct pa_health_info {
	enum pa_health_status status;
	enum pa_health_result last;	/**< the last probe's result */
	uint16_t last_status_code;	/**< http: the last status seen */
	uint32_t last_latency_us;	/**< the last probe, start to end */
	uint32_t ok_run;		/**< passes in a row */
	uint32_t fail_run;		/**< failures in a row */
	uint64_t probes;		/**< probes ended */
	uint64_t failures;		/**< ... that failed */
	uint64_t changed_ms;		/**< time of the last status change */
	/* agent checks only (PA_HEALTH_AGENT) */
	int16_t agent_pct;		/**< the weight percentage in force:
					 * quantized to 10 % steps, taken once
					 * reported rise times in a row; -1:
					 * none yet (full weight) */
	int16_t agent_reported;		/**< the last report's, quantized; -1 */
	uint16_t agent_same;		/**< ... reported so many times in a row */
	uint8_t agent_state;		/**< enum pa_health_agent_state, as last
					 * said (at once, no hysteresis) */
};

struct pa_health;

/** Status change of target @p idx (from pa_health_run()). */
typedef void (*pa_health_change_fn)(void *arg, unsigned int idx,
		const struct pa_health_info *info);

/** The limit when RLIMIT_NOFILE cannot be read (max_inflight 0). */
#define PA_HEALTH_DEF_MAX_INFLIGHT	1024
/**
 * The automatic limit's ceiling, about the frames the exception path
 * holds (the kernel_if's txqueuelen of 1,000, lib/neigh's TX ring, the
 * punt ring). Every probe in flight may have a frame queued on its way
 * out: far more probes in flight than that turn a stall of the data path
 * into dropped SYNs, timeouts and sockets held for their whole timeout
 * (perf/bench_health.py, 10,000 backends at 1 s on a loaded 2-CPU
 * machine: with 5,652 in flight one run of five collapsed to 4,986
 * probes/s, 41,590 of the kernel's frames dropped in 20 s); far fewer
 * hold the rate back (1,024: 7,137 probes/s; 2,048: 9,598). A path
 * slower than the probes' rate then holds them back (due probes wait,
 * keeping their grid) rather than dropping them.
 */
#define PA_HEALTH_AUTO_MAX_INFLIGHT	2048

struct pa_health_opts {
	unsigned int max_targets;	/**< slots */
	unsigned int max_inflight;	/**< 0: sized from the targets (above) */
	pa_health_change_fn on_change;	/**< status changes; may be NULL */
	/** Every probe's end, after the status was updated (a change is
	 * reported here first, then to on_change); may be NULL. */
	pa_health_change_fn on_probe;
	void *arg;
};

/** @return a prober, or NULL with the reason in @p err. */
struct pa_health *pa_health_create(const struct pa_health_opts *o,
		char *err, size_t err_len);

/** Close every socket and free. NULL is fine. */
void pa_health_destroy(struct pa_health *h);

/**
 * Probe target @p idx as @p spec says from now on. The same spec as
 * before changes nothing; another one starts afresh (status unknown,
 * a probe in flight abandoned).
 * @return 0, or -EINVAL (bad index or spec).
 */
int pa_health_set(struct pa_health *h, unsigned int idx,
		const struct pa_health_spec *spec, uint64_t now_ms);

/** Stop probing target @p idx (nothing if it is not set). */
void pa_health_clear(struct pa_health *h, unsigned int idx);

/** Is target @p idx set? */
bool pa_health_is_set(const struct pa_health *h, unsigned int idx);

/** The fd to wait on for readability (an epoll fd). */
int pa_health_fd(const struct pa_health *h);

/** Milliseconds until pa_health_run() has a timer to serve (0: now),
 * or -1 when no target is set. */
int pa_health_timeout_ms(const struct pa_health *h, uint64_t now_ms);

/**
 * Take the sockets' events, end the probes that answered or timed out,
 * start the probes that are due. Never blocks.
 * @return probes ended in this call.
 */
unsigned int pa_health_run(struct pa_health *h, uint64_t now_ms);

/** State of target @p idx. @return 0 or -ENOENT. */
int pa_health_get(const struct pa_health *h, unsigned int idx,
		struct pa_health_info *out);

/** Counters of a prober. */
struct pa_health_stats {
	uint64_t targets;		/**< set now */
	uint64_t up, down, unknown;	/**< targets by status now */
	uint64_t inflight;		/**< probes in flight now */
	uint64_t max_inflight;		/**< the limit in force now */
	uint64_t waiting;		/**< due probes waiting for a free
					 * socket now */
	uint64_t probes;		/**< probes ended */
	uint64_t results[PA_HEALTH_R_MAX];	/**< ... by result */
	uint64_t deferred;		/**< due probes that had to wait for a
					 * free socket (max_inflight), each
					 * counted once */
	uint64_t transitions;		/**< status changes */
};

void pa_health_stats(const struct pa_health *h, struct pa_health_stats *s);

/**
 * Parse an agent's line (NUL-terminated). @p pct: the percentage said
 * (-1: none), not quantized; @p st: the state said (NONE: none).
 * @return 0, or -EINVAL when the line says nothing we know.
 */
int pa_health_agent_parse(const char *line, int *pct,
		enum pa_health_agent_state *st);

/** A percentage quantized as the agent check does (10 % steps, a
 * non-zero one at least 10 %). */
int pa_health_agent_quantize(int pct);

/** "none", "up", "drain", "down". */
const char *pa_health_agent_state_name(enum pa_health_agent_state s);

/** "up", "down", "unknown". */
const char *pa_health_status_name(enum pa_health_status s);
/** "none", "ok", "refused", "timeout", "unreachable", "bad_status",
 * "bad_reply", "error". */
const char *pa_health_result_name(enum pa_health_result r);

#endif /* PA_HEALTH_H */
