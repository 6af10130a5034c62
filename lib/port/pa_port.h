/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef PA_PORT_H
#define PA_PORT_H

/**
 * @file
 * Ports: any DPDK ethdev named by the configuration, either by devargs
 * (virtual devices: net_pcap, net_af_packet, net_ring, net_null, ...) or by
 * PCI address with a NIC profile from drivers-config/.
 *
 * Life cycle (control thread only): pa_port_probe() finds or hot-plugs the
 * devices and learns their NUMA socket and limits; the pipeline then
 * decides queue counts and in-flight budget and calls pa_port_setup(),
 * which creates each port's mbuf pool on the port's socket and configures
 * and starts the port. pa_port_stop_all() and pa_port_close_all() undo it.
 */

#include <stdbool.h>
#include <stdint.h>

#include <rte_ether.h>
#include <rte_mempool.h>
#include <rte_spinlock.h>

#include <jansson.h>

#include "pa_config.h"

#define PA_PORT_MAX_QUEUES	64

/*
 * RSS steering. A NIC spreads received packets over its RX queues by a
 * Toeplitz hash of their addresses (and ports, per hash type) with its
 * key, through its redirection table (RETA: hash % size -> queue). Which
 * queue a flow's packets arrive on can therefore be computed in software
 * (rte_softrss()) from the flow's 5-tuple: the rtc pipeline uses it to
 * hand an ICMP error to the worker that receives the flow it quotes.
 */
#define PA_PORT_RSS_KEY_MIN	40	/**< bytes: an IPv6 4-tuple's hash */
#define PA_PORT_RSS_KEY_MAX	64
#define PA_PORT_RSS_RETA_MAX	512	/**< RTE_ETH_RSS_RETA_SIZE_512 */

/** Where a port's RSS model comes from. */
enum pa_port_steer {
	PA_PORT_STEER_OFF = 0,	/**< unknown (one RX queue, no RSS, "off") */
	PA_PORT_STEER_DEVICE,	/**< read back from the started device */
	PA_PORT_STEER_TOEPLITZ,	/**< "toeplitz": the appliance's key,
				 * 128-entry RETA i -> i % RX queues */
};

/** A device's RSS, as pa_port_rss_hash() computes it. */
struct pa_port_rss {
	uint8_t key[PA_PORT_RSS_KEY_MAX];	/**< Toeplitz key, as given */
	uint8_t key_len;
	uint16_t reta_size;
	uint64_t hf;				/**< RTE_ETH_RSS_* hash types */
	uint16_t reta[PA_PORT_RSS_RETA_MAX];	/**< entry -> RX queue */
};

/**
 * Set @p r from a key, hash types and RETA (copied).
 * @return 0, or -EINVAL (key shorter than PA_PORT_RSS_KEY_MIN or longer
 *         than PA_PORT_RSS_KEY_MAX, RETA empty or over
 *         PA_PORT_RSS_RETA_MAX).
 */
int pa_port_rss_model_set(struct pa_port_rss *r, const uint8_t *key,
		unsigned int key_len, uint64_t hf, const uint16_t *reta,
		unsigned int reta_size);

/**
 * The Toeplitz hash a device with model @p r gives a packet from @p src
 * to @p dst (4 or 16 bytes, network order, per @p family 4 / 6),
 * protocol @p proto, ports @p sport / @p dport (host order): over the
 * addresses and ports when the hash types have @p proto's ("tcp", "udp",
 * "sctp" of the family), over the addresses when they have the family's
 * IP types, else 0 (unhashed). Input order: source, destination, source
 * port, destination port (Microsoft's RSS verification suite).
 */
uint32_t pa_port_rss_hash(const struct pa_port_rss *r, uint8_t family,
		uint8_t proto, const uint8_t *src, const uint8_t *dst,
		uint16_t sport, uint16_t dport);

/** The RX queue of RSS hash @p hash under model @p r. */
static inline uint16_t
pa_port_rss_queue(const struct pa_port_rss *r, uint32_t hash)
{
	return r->reta[hash % r->reta_size];
}

/** The symmetric Toeplitz key every RSS port is configured with (both
 * directions of a flow hash alike). */
extern const uint8_t pa_port_sym_rss_key[40];

/** "off", "device", "toeplitz". */
const char *pa_port_steer_name(enum pa_port_steer s);

struct pa_port;

/**
 * Learn port @p p's RSS model after it started (pa_port_setup() does):
 * "auto" reads the key, hash types and RETA back from a device that
 * hashes over several RX queues; "toeplitz" sets the appliance's own;
 * "off", or one RX queue, leaves steer OFF.
 * @return 0, or -errno (steer stays OFF; -ENOTSUP: the device does not
 *         say how it spreads packets).
 */
int pa_port_rss_steer_init(struct pa_port *p, enum pa_config_rss_steer mode);

struct pa_port {
	char name[PA_CONFIG_NAME_MAX];
	char driver[32];
	uint16_t port_id;		/**< ethdev port id */
	int socket;			/**< NUMA socket (0 when unknown) */
	uint16_t peer;			/**< index of the peer port */
	uint16_t max_rxq, max_txq;	/**< device limits */
	uint16_t nb_rxq, nb_txq;	/**< configured */
	uint16_t rx_desc, tx_desc;
	uint16_t mtu;
	uint64_t rx_offloads, tx_offloads;
	bool rss;
	bool rss_required;		/**< the profile says "rss": true */
	bool promisc;
	/** A routed port (one with "addr"): it takes only frames for its
	 * MAC, broadcast and the multicast it handles, sends with its own
	 * MAC and routes transit traffic (docs/configuration.md "Port
	 * roles"). Otherwise transparent. */
	bool routed;
	/** Its own addresses ("addr", host part kept), for the rx stage's
	 * "for this port" test and as the source of the ICMP errors it
	 * sends (the first of each family). Network order. */
	uint8_t n_addr4, n_addr6;
	uint32_t addr4[PA_CONFIG_MAX_ADDRS];
	/** The directed broadcast of each IPv4 address's subnet (addr4[i]
	 * with the host bits set), 0 for a /31 or /32 (none). Network
	 * order. */
	uint32_t bcast4[PA_CONFIG_MAX_ADDRS];
	uint8_t addr6[PA_CONFIG_MAX_ADDRS][16];
	/** A port with a kernel_if: the IPv6 link-local address its TAP
	 * has (pa_port_link_local() of its MAC), one of its own addresses
	 * wherever they count (lib/neigh answers ND for it, lib/excp gives
	 * the TAP it and hands it what is sent to it). */
	bool has_ll6;
	uint8_t ll6[16];
	/** RSS configured on the device (several RX queues, the driver
	 * hashes): the symmetric key, IP/TCP/UDP hash types */
	bool rss_on;
	enum pa_config_rss_steer rss_steer_mode;	/**< "rss_steer" */
	/** Whether and how the RX queue of a flow's packets is known
	 * (pa_port_rss_queue()); set when the port starts. */
	enum pa_port_steer steer;
	struct pa_port_rss rss_model;	/**< the model, steer != OFF */
	bool probed_by_us;		/**< hot-plugged: detach on close */
	bool configured, started;
	struct rte_ether_addr mac;
	struct rte_mempool *pool;	/**< mbufs this port receives into */
	uint32_t pool_size;
	uint32_t min_mbufs;		/**< configured floor of pool_size */
	uint16_t mbuf_data_room;
	/** TX queues used by more lcores than there are queues take this
	 * lock (VPP's shared TX queue); one entry per queue. */
	bool tx_shared;
	rte_spinlock_t tx_lock[PA_PORT_MAX_QUEUES];
};

struct pa_port_set {
	unsigned int n;
	struct pa_port port[PA_CONFIG_MAX_PORTS];
	/** ethdev port id -> index in port[] (or 0xffff). */
	uint16_t index_of[RTE_MAX_ETHPORTS];
};

/** What the pipeline asks of pa_port_setup(). */
struct pa_port_setup_req {
	uint16_t nb_rxq[PA_CONFIG_MAX_PORTS];	/**< per port */
	uint16_t nb_txq[PA_CONFIG_MAX_PORTS];
	uint16_t tx_users[PA_CONFIG_MAX_PORTS];	/**< lcores transmitting */
	/** mbufs that can be parked outside the port's descriptor rings:
	 * rings between stages, per-lcore bursts, TX buffers. */
	uint32_t inflight;
	unsigned int n_lcores;		/**< lcores that take from the pools */
	uint16_t burst;
	bool no_cache;			/**< replay: no per-lcore mempool cache,
					 * so that free counts are exact */
	uint16_t segs_per_pkt;		/**< replay: mbufs per packet worst case */
};

/**
 * Find or create the devices of @p cfg's ports and fill @p ps.
 * @return 0, or -errno with a one-line reason in @p err.
 */
int pa_port_probe(struct pa_port_set *ps, const struct pa_config *cfg,
		char *err, size_t err_len);

/**
 * Create pools, configure queues and start every port.
 * @return 0, or -errno with a reason in @p err.
 */
int pa_port_setup(struct pa_port_set *ps, const struct pa_port_setup_req *req,
		char *err, size_t err_len);

/** Stop every started port (idempotent). */
void pa_port_stop_all(struct pa_port_set *ps);

/** Close ports, detach hot-plugged devices. Pools stay (see below). */
void pa_port_close_all(struct pa_port_set *ps);

/** Mbufs currently taken from the ports' pools (all ports). */
unsigned int pa_port_mbufs_in_use(const struct pa_port_set *ps);

/** Free the pools. Call after pa_port_close_all(). */
void pa_port_free_pools(struct pa_port_set *ps);

/** The full PCI name ("0000:3b:00.0") of a configured address that may
 * omit the domain ("3b:00.0"): the name ethdev and sysfs use. */
void pa_port_pci_name(const char *pci, char *buf, size_t len);

/**
 * Queue count a port's configuration asks for: the port's own
 * rx_queues/tx_queues, else its profile's, else 0 (the pipeline decides).
 */
uint16_t pa_port_conf_queues(const struct pa_config_port *cp, bool rx);

/** Index of a port by ethdev id, or -1. */
static inline int
pa_port_index(const struct pa_port_set *ps, uint16_t port_id)
{
	if (port_id >= RTE_MAX_ETHPORTS || ps->index_of[port_id] == UINT16_MAX)
		return -1;
	return ps->index_of[port_id];
}

/** A port's counters and link, as one reading (pa_port_snapshot()). */
struct pa_port_snapshot {
	char name[PA_CONFIG_NAME_MAX];	/**< the port's name */
	char driver[32];		/**< its PMD */
	uint16_t port_id;		/**< ethdev port id */
	int socket;			/**< NUMA socket */
	bool link_up;
	uint32_t speed_mbps;		/**< link speed, Mbit/s */
	uint64_t rx_packets;		/**< ipackets */
	uint64_t tx_packets;		/**< opackets */
	uint64_t rx_bytes;		/**< ibytes */
	uint64_t tx_bytes;		/**< obytes */
	uint64_t rx_missed;		/**< imissed: no RX descriptor */
	uint64_t rx_errors;		/**< ierrors */
	uint64_t tx_errors;		/**< oerrors */
	uint64_t rx_nombuf;		/**< RX mbuf allocation failures */
	uint16_t rx_queues, tx_queues;	/**< configured */
	uint16_t rx_desc, tx_desc;	/**< descriptors per queue */
	uint64_t mbufs_in_use;		/**< taken from the port's pool */
	uint64_t pool_size;		/**< mbufs in the port's pool */
	/** RSS steering in effect: "off", "device", "toeplitz" (static) */
	const char *rss_steer;
};

/**
 * Read port @p i of @p ps: rte_eth_stats, link state (without waiting),
 * queues, descriptors and its pool's use. A port that was never started
 * reads as zeros. Control thread.
 */
void pa_port_snapshot(const struct pa_port_set *ps, unsigned int i,
		struct pa_port_snapshot *o);

/* ---- routed ports (port_route.c; hot-path parts in pa_port_inline.h) ---- */

/** ICMP errors a data-path lcore may send, per second, and its burst
 * (Linux's net.ipv4.icmp_msgs_per_sec / icmp_msgs_burst defaults). */
#define PA_PORT_ICMP_RATE	1000
#define PA_PORT_ICMP_BURST	50

/** Largest ICMP error frame built: an IPv6 error of 1280 bytes (RFC 4443
 * 2.4 (c)), Ethernet and two VLAN tags. */
#define PA_PORT_ICMP_FRAME_MAX	(14 + 8 + 1280)

/**
 * Build the ICMP time exceeded (IPv4 type 11 code 0, RFC 792; ICMPv6 type
 * 3 code 0, RFC 4443) that answers @p frame, an IPv4 or IPv6 packet whose
 * TTL / hop limit ran out: to the frame's Ethernet source, from
 * @p src_mac, with the frame's VLAN tags; IP source @p src_ip (4 or 16
 * bytes, the family of the frame), destination the packet's source, TTL /
 * hop limit 64. It quotes as much of the packet as fits in 576 bytes
 * (IPv4, RFC 1812 4.3.2.3) or 1280 (IPv6), never the Ethernet padding.
 *
 * None is built (RFC 1122 3.2.2, RFC 4443 2.4 (e)) about an ICMP error,
 * a non-first fragment, or a packet whose source is not a unicast
 * address (unspecified, multicast, IPv4 broadcast or loopback), nor to
 * an Ethernet source that is a group, all zeros or @p src_mac itself
 * (RFC 1812 4.3.2.7: never reflected to a group or to the port).
 *
 * @param l3_off  offset of the IP header in @p frame
 * @param len     bytes of @p frame
 * @return the frame's length, or 0 (none to send, or @p room too small).
 */
uint32_t pa_port_build_time_exceeded(uint8_t *buf, uint32_t room,
		const uint8_t *frame, uint32_t len, uint16_t l3_off,
		const uint8_t src_mac[6], const uint8_t *src_ip);

/**
 * The modified EUI-64 link-local address of @p mac (RFC 4291 2.5.1,
 * appendix A): fe80::, then the MAC with the universal/local bit
 * flipped and ff:fe in its middle. Network order.
 */
void pa_port_link_local(const uint8_t mac[6], uint8_t out[16]);

extern int pa_port_logtype;

#include "pa_port_inline.h"

#endif /* PA_PORT_H */
