/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef PA_EXCP_H
#define PA_EXCP_H

/**
 * @file
 * The exception path: a kernel TAP interface per routed port that names
 * "kernel_if" (docs/architecture.md, "The exception path").
 *
 * Each such port gets a DPDK net_tap ethdev ("net_tap_excpN,iface=NAME,
 * mac=..."): a kernel interface with the port's MAC, its "addr" (IPv4 and
 * IPv6, with their prefix lengths) and MTU, up, in the daemon's network
 * namespace. pa_excp_close() removes it.
 *
 * The af_packet ports' interfaces. A net_af_packet port ("iface=NAME"
 * in its devargs) is a kernel interface whose own stack also receives
 * the port's frames. While any kernel_if exists (pa_excp_create() to
 * pa_excp_close()) that stack ignores them, on every such interface of
 * the appliance: net.ipv4.conf.NAME.arp_ignore 8, rp_filter 1 and
 * net.ipv6.conf.NAME.disable_ipv6 1 (the old values are put back at
 * close; one that cannot be set is logged, start-up goes on).
 *
 * Wire -> kernel. The rx stage (pa_excp_punt(), pa_excp_inline.h) hands
 * a frame for one of the receiving port's own addresses (the "ours" bit
 * of lib/neigh's address table) that lib/neigh does not take and the
 * load balancer does not keep (a VIP's; of lb.local_addr shared with the
 * port, what pa_lb_local_owns() says) to a bounded multi-producer ring of that port, within a token bucket
 * per (rx lcore, port): no lock, no syscall, no allocation. What does
 * not fit is dropped ("excp_full", "excp_rate"); what fits counts as
 * "local" (it left the data path for the appliance itself). ARP replies
 * and neighbour advertisements sent to the port's own address, which
 * lib/neigh takes, are also given to the kernel (the same mbuf, one more
 * reference): the kernel resolves its own neighbours, the appliance's
 * cache keeps working.
 *
 * Kernel -> wire and the ring's consumer: pa_excp_poll() on the exception
 * path's own thread ("pa-excp", pa_excp_start()) writes the rings' frames
 * to the TAPs and sends what the kernel wrote to a TAP on lib/neigh's TX
 * ring of the port (pa_neigh_tx_ring(): multi-producer, this thread and
 * the control thread's pa_neigh_poll()), which a data-path lcore drains
 * onto its TX queue of the port. It reads from a TAP only what that ring
 * has room for: the rest waits in the TAP's queue (the kernel's
 * txqueuelen; the kernel counts what overflows it as the interface's TX
 * drops), "from_kernel_held" counts such polls. The thread waits in
 * poll() on the TAPs' queue fds (the kernel's frames leave at once) and
 * at most PA_EXCP_POLL_MS for the punt rings (the data path makes no
 * system call to wake it), not at all while frames keep coming: the
 * control thread (RPC, metrics) neither carries the frames nor wakes for
 * them.
 *
 * Thread safety: pa_excp_punt() and pa_excp_fast(): the data path;
 * pa_excp_poll(): the exception path's thread (or, without it, one
 * caller); pa_excp_snapshot(): any one thread (the counters are read as
 * they are); create, start: the main thread; stop, close, destroy: the
 * main thread once the data path has stopped.
 */

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "pa_config.h"
#include "pa_port.h"

#define PA_EXCP_RING		512	/**< frames waiting for a kernel_if, per port */
#define PA_EXCP_DEF_RATE_PPS	20000	/**< per port, all rx lcores together */
#define PA_EXCP_DEF_BURST	256	/**< token bucket depth, per rx lcore */
#define PA_EXCP_POLL_MS		1	/**< the exception path's thread's
					 * longest wait (the punt rings) */
#define PA_EXCP_TAP_DESC	512	/**< TAP ethdev descriptors */

/** Mbufs of the ports' pools the exception rings can hold at once. */
#define PA_EXCP_INFLIGHT(n_kernel_ifs)	((n_kernel_ifs) * PA_EXCP_RING)

struct pa_neigh;
struct pa_excp;
struct pa_excp_fast;

struct pa_excp_opts {
	/** Ports' kernel_if, addr, mtu. Borrowed. */
	const struct pa_config *cfg;
	/** Port ids and MACs. Borrowed. */
	const struct pa_port_set *ports;
	/** The address table (its data path half) and the TX rings. */
	struct pa_neigh *neigh;
	/** Data-path lcores (bucket rows are indexed by their widx). */
	unsigned int n_lcores;
	/** Lcores running the rx stage: the rate is shared among them. */
	unsigned int n_rx_lcores;
	int socket;
};

/** Ports of @p cfg that name a kernel_if. */
unsigned int pa_excp_count(const struct pa_config *cfg);

/**
 * Create the TAP of every port that names a kernel_if, configure its
 * addresses, MTU and state, and the punt rings. NULL with "" in @p err
 * when no port has one (nothing to do).
 * @return it, or NULL with a reason that names the port in @p err
 *         ("port wan0: kernel_if 'pa0': ...").
 */
struct pa_excp *pa_excp_create(const struct pa_excp_opts *o, char *err,
		size_t err_len);

/** What the rx stage reads (pa_excp_inline.h), or NULL for NULL. */
const struct pa_excp_fast *pa_excp_fast(const struct pa_excp *x);

/**
 * Move frames both ways (a bounded amount per call): the exception path's
 * thread; without it (pa_excp_start() not called) one caller.
 * @return frames moved (0: nothing was waiting).
 */
unsigned int pa_excp_poll(struct pa_excp *x);

/**
 * Start the exception path's thread ("pa-excp", rte_ctrl_thread_create():
 * the control threads' CPU affinity, never a data-path lcore), which
 * runs pa_excp_poll() until pa_excp_stop(). Main thread, once the data
 * path runs. NULL is fine (nothing).
 * @return 0, or -errno with the reason in @p err.
 */
int pa_excp_start(struct pa_excp *x, char *err, size_t err_len);

/** Stop the thread and join it (woken by an eventfd). Nothing if it was
 * not started; pa_excp_close() and pa_excp_destroy() call it. */
void pa_excp_stop(struct pa_excp *x);

/**
 * Remove the kernel interfaces (close the TAP ethdevs) and free the
 * frames still in the punt rings (mbufs of the ports' pools). The data
 * path and the control thread have stopped; call before the ports are
 * closed. NULL is fine.
 */
void pa_excp_close(struct pa_excp *x);

/**
 * Free the rest, the TAPs' mbuf pool included: after pa_excp_close() and
 * after lib/neigh's TX rings (which may hold its mbufs) were emptied
 * (pa_neigh_destroy()). NULL is fine.
 */
void pa_excp_destroy(struct pa_excp *x);

/** One kernel_if's counters (pa_excp_snapshot()). */
struct pa_excp_if_snapshot {
	char port[PA_CONFIG_NAME_MAX];	/**< the port's name */
	char ifname[PA_CONFIG_IFNAME_MAX]; /**< the kernel interface */
	uint64_t to_kernel;		/**< frames written to the TAP */
	uint64_t to_kernel_dropped;	/**< ... the TAP refused */
	uint64_t from_kernel;		/**< frames the kernel sent, queued for
					 * the port's TX */
	uint64_t from_kernel_dropped;	/**< ... with no room on the TX ring */
	uint64_t from_kernel_foreign;	/**< ... not from the port's MAC: dropped */
	uint64_t from_kernel_held;	/**< polls that left the kernel's frames
					 * in the TAP's queue: the port's TX
					 * ring was full */
	uint64_t queued;		/**< frames waiting in the punt ring */
	uint32_t rate_pps;		/**< kernel_if_pps (or the default) */
	uint32_t burst;			/**< kernel_if_burst (or the default) */
};

/** The exception path's counters at one moment (stats_get "excp",
 * /metrics). Plain values owned by the caller. */
struct pa_excp_snapshot {
	unsigned int n;			/**< kernel_ifs */
	struct pa_excp_if_snapshot ifs[PA_CONFIG_MAX_PORTS];
	uint64_t clones;		/**< ARP replies / NAs also given to
					 * the kernel */
	uint64_t clones_skipped;	/**< ... not given: ring full or rate */
};

/** Fill @p s. Any one thread at a time (the control thread). */
void pa_excp_snapshot(const struct pa_excp *x, struct pa_excp_snapshot *s);

/**
 * The "excp" object of stats_get: {"clones", "clones_skipped",
 * "interfaces": {PORT: {"kernel_if", "rate_pps", "burst", "to_kernel",
 * "to_kernel_dropped", "from_kernel", "from_kernel_dropped",
 * "from_kernel_foreign", "from_kernel_held", "queued"}}}.
 * @return new reference, or NULL on allocation failure.
 */
json_t *pa_excp_snapshot_json(const struct pa_excp_snapshot *s);

extern int pa_excp_logtype;

#include "pa_excp_inline.h"

#endif /* PA_EXCP_H */
