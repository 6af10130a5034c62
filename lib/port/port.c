/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Ethdev ports: find or hot-plug each configured device, check it against
 * its NIC profile, configure and start it with a pool on its NUMA socket,
 * stop and close it, and read its counters.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <rte_bus.h>
#include <rte_dev.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_log.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "pa_err.h"
#include "pa_port.h"

RTE_LOG_REGISTER(pa_port_logtype, pa.port, INFO);
#define PORT_LOG(level, fmt, ...) \
	rte_log(RTE_LOG_ ## level, pa_port_logtype, "pa.port: " fmt "\n", ##__VA_ARGS__)

#define DEFAULT_DESC		1024
#define MAX_MEMPOOL_CACHE	256

/* Symmetric Toeplitz key: both directions of a flow land on one queue.
 * Also the key of rss_steer "toeplitz" (port_rss.c). */
const uint8_t pa_port_sym_rss_key[40] = {
	0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a,
	0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a,
	0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a,
	0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a,
};

static const struct {
	const char *name;
	uint64_t rx;
	uint64_t tx;
} offload_names[] = {
	{ "ipv4_cksum", RTE_ETH_RX_OFFLOAD_IPV4_CKSUM, RTE_ETH_TX_OFFLOAD_IPV4_CKSUM },
	{ "udp_cksum", RTE_ETH_RX_OFFLOAD_UDP_CKSUM, RTE_ETH_TX_OFFLOAD_UDP_CKSUM },
	{ "tcp_cksum", RTE_ETH_RX_OFFLOAD_TCP_CKSUM, RTE_ETH_TX_OFFLOAD_TCP_CKSUM },
	{ "scatter", RTE_ETH_RX_OFFLOAD_SCATTER, 0 },
	{ "vlan_strip", RTE_ETH_RX_OFFLOAD_VLAN_STRIP, 0 },
	{ "rss_hash", RTE_ETH_RX_OFFLOAD_RSS_HASH, 0 },
	{ "multi_segs", 0, RTE_ETH_TX_OFFLOAD_MULTI_SEGS },
	{ "mbuf_fast_free", 0, RTE_ETH_TX_OFFLOAD_MBUF_FAST_FREE },
};

static uint64_t
offloads_from_profile(const json_t *profile, const char *key, bool rx)
{
	const json_t *arr, *v;
	uint64_t flags = 0;
	size_t i, j;

	if (profile == NULL)
		return 0;
	arr = json_object_get(profile, key);
	json_array_foreach(arr, i, v) {
		for (j = 0; j < RTE_DIM(offload_names); j++) {
			if (json_is_string(v) &&
			    strcmp(json_string_value(v), offload_names[j].name) == 0)
				flags |= rx ? offload_names[j].rx : offload_names[j].tx;
		}
	}
	return flags;
}

/* Name of the first flag of @p missing in the offload table. */
static const char *
offload_name(uint64_t missing, bool rx)
{
	size_t j;

	for (j = 0; j < RTE_DIM(offload_names); j++)
		if ((rx ? offload_names[j].rx : offload_names[j].tx) & missing)
			return offload_names[j].name;
	return "?";
}

/* A profile is written for one PMD: refuse it on another, and refuse
 * offloads the device cannot do rather than run without them unnoticed. */
static int
profile_check(const struct pa_config_port *cp,
		const struct rte_eth_dev_info *info, unsigned int n_ports,
		char *err, size_t err_len)
{
	const char *drv;
	uint64_t want, missing;

	if (cp->profile_doc == NULL)
		return 0;
	drv = json_string_value(json_object_get(cp->profile_doc, "driver"));
	if (drv == NULL || strcmp(drv, info->driver_name) != 0) {
		pa_seterr(err, err_len,
			"port %s: profile '%s' is for driver %s, but the device is driven by %s",
			cp->name, cp->profile, drv != NULL ? drv : "?",
			info->driver_name);
		return -EINVAL;
	}
	/* Fast free wants every mbuf a TX queue frees from one pool; pools
	 * are per port and packets cross from port to port. */
	want = offloads_from_profile(cp->profile_doc, "tx_offloads", false);
	if ((want & RTE_ETH_TX_OFFLOAD_MBUF_FAST_FREE) && n_ports > 1) {
		pa_seterr(err, err_len,
			"port %s: TX offload 'mbuf_fast_free' (profile '%s') needs a single port: with %u ports a TX queue frees mbufs of several pools",
			cp->name, cp->profile, n_ports);
		return -EINVAL;
	}
	want = offloads_from_profile(cp->profile_doc, "rx_offloads", true);
	missing = want & ~info->rx_offload_capa;
	if (missing != 0) {
		pa_seterr(err, err_len,
			"port %s: driver %s cannot do RX offload '%s' (profile '%s')",
			cp->name, info->driver_name, offload_name(missing, true),
			cp->profile);
		return -ENOTSUP;
	}
	want = offloads_from_profile(cp->profile_doc, "tx_offloads", false);
	missing = want & ~info->tx_offload_capa;
	if (missing != 0) {
		pa_seterr(err, err_len,
			"port %s: driver %s cannot do TX offload '%s' (profile '%s')",
			cp->name, info->driver_name, offload_name(missing, false),
			cp->profile);
		return -ENOTSUP;
	}
	return 0;
}

uint16_t
pa_port_conf_queues(const struct pa_config_port *cp, bool rx)
{
	const json_t *v;

	if ((rx ? cp->rx_queues : cp->tx_queues) != 0)
		return rx ? cp->rx_queues : cp->tx_queues;
	if (cp->profile_doc == NULL)
		return 0;
	v = json_object_get(cp->profile_doc, rx ? "rx_queues" : "tx_queues");
	if (!json_is_integer(v) || json_integer_value(v) <= 0 ||
	    json_integer_value(v) > PA_PORT_MAX_QUEUES)
		return 0;
	return (uint16_t)json_integer_value(v);
}

static unsigned int
profile_uint(const json_t *profile, const char *key, unsigned int def)
{
	const json_t *v;

	if (profile == NULL)
		return def;
	v = json_object_get(profile, key);
	if (!json_is_integer(v) || json_integer_value(v) <= 0)
		return def;
	return (unsigned int)json_integer_value(v);
}

void
pa_port_pci_name(const char *pci, char *buf, size_t len)
{
	unsigned int colons = 0;
	const char *p;

	for (p = pci; *p != '\0'; p++)
		colons += (*p == ':');
	if (colons == 1)
		snprintf(buf, len, "0000:%s", pci);
	else
		snprintf(buf, len, "%s", pci);
}

static int
probe_one(struct pa_port *p, const struct pa_config_port *cp, char *err,
		size_t err_len)
{
	char name[RTE_ETH_NAME_MAX_LEN];
	char devargs[1024];
	const char *extra = NULL;
	const json_t *v;
	uint16_t port_id;
	size_t n;
	int ret;

	if (cp->profile_doc != NULL) {
		v = json_object_get(cp->profile_doc, "devargs");
		if (json_is_string(v) && json_string_length(v) > 0)
			extra = json_string_value(v);
	}
	if (cp->devargs != NULL) {
		n = strcspn(cp->devargs, ",");
		if (n == 0 || n >= sizeof(name)) {
			pa_seterr(err, err_len, "port %s: bad devargs '%s'",
				cp->name, cp->devargs);
			return -EINVAL;
		}
		memcpy(name, cp->devargs, n);
		name[n] = '\0';
		snprintf(devargs, sizeof(devargs), "%s%s%s", cp->devargs,
			extra != NULL ? "," : "", extra != NULL ? extra : "");
	} else {
		pa_port_pci_name(cp->pci, name, sizeof(name));
		snprintf(devargs, sizeof(devargs), "%s%s%s", name,
			extra != NULL ? "," : "", extra != NULL ? extra : "");
	}

	if (rte_eth_dev_get_port_by_name(name, &port_id) != 0) {
		ret = rte_dev_probe(devargs);
		if (ret < 0) {
			pa_seterr(err, err_len, "port %s: cannot probe '%s': %s",
				cp->name, devargs, rte_strerror(-ret));
			return ret;
		}
		if (rte_eth_dev_get_port_by_name(name, &port_id) != 0) {
			pa_seterr(err, err_len,
				"port %s: device '%s' probed but has no ethdev port",
				cp->name, name);
			return -ENODEV;
		}
		p->probed_by_us = true;
	}
	p->port_id = port_id;
	return 0;
}

/* The role and own addresses of a port (pa_port.h). */
static void
port_role(struct pa_port *p, const struct pa_config_port *cp)
{
	unsigned int i;

	p->routed = cp->n_addrs != 0;
	p->n_addr4 = 0;
	p->n_addr6 = 0;
	for (i = 0; i < cp->n_addrs; i++) {
		const struct pa_ip_addr *a = &cp->addrs[i].addr;

		if (a->family == AF_INET) {
			unsigned int len = cp->addrs[i].len;
			uint32_t host = len >= 31 ? 0 :
				UINT32_MAX >> len;

			memcpy(&p->addr4[p->n_addr4], &a->v4, 4);
			p->bcast4[p->n_addr4] = host == 0 ? 0 :
				p->addr4[p->n_addr4] | rte_cpu_to_be_32(host);
			p->n_addr4++;
		} else
			memcpy(p->addr6[p->n_addr6++], &a->v6, 16);
	}
}

int
pa_port_probe(struct pa_port_set *ps, const struct pa_config *cfg,
		char *err, size_t err_len)
{
	struct rte_eth_dev_info info;
	unsigned int i;
	int ret, sock;

	memset(ps, 0, sizeof(*ps));
	memset(ps->index_of, 0xff, sizeof(ps->index_of));
	if (cfg->n_ports == 0) {
		pa_seterr(err, err_len, "no ports configured");
		return -EINVAL;
	}
	for (i = 0; i < cfg->n_ports; i++) {
		const struct pa_config_port *cp = &cfg->ports[i];
		struct pa_port *p = &ps->port[i];

		snprintf(p->name, sizeof(p->name), "%s", cp->name);
		ret = probe_one(p, cp, err, err_len);
		if (ret < 0)
			goto fail;
		ps->n = i + 1;
		if (ps->index_of[p->port_id] != UINT16_MAX) {
			pa_seterr(err, err_len, "port %s: same device as port %s",
				cp->name, ps->port[ps->index_of[p->port_id]].name);
			ret = -EEXIST;
			goto fail;
		}
		ps->index_of[p->port_id] = i;
		ret = rte_eth_dev_info_get(p->port_id, &info);
		if (ret != 0) {
			pa_seterr(err, err_len, "port %s: no device info: %s",
				cp->name, rte_strerror(-ret));
			goto fail;
		}
		snprintf(p->driver, sizeof(p->driver), "%s", info.driver_name);
		ret = profile_check(cp, &info, cfg->n_ports, err, err_len);
		if (ret != 0)
			goto fail;
		sock = rte_eth_dev_socket_id(p->port_id);
		p->socket = sock < 0 ? 0 : sock;
		p->max_rxq = RTE_MIN(info.max_rx_queues, PA_PORT_MAX_QUEUES);
		p->max_txq = RTE_MIN(info.max_tx_queues, PA_PORT_MAX_QUEUES);
		if (p->max_rxq == 0 || p->max_txq == 0) {
			pa_seterr(err, err_len, "port %s: device has no %s queue",
				cp->name, p->max_rxq == 0 ? "RX" : "TX");
			ret = -ENODEV;
			goto fail;
		}
		p->peer = cp->peer < 0 ? i : (uint16_t)cp->peer;
		p->promisc = cp->promisc;
		p->rss_steer_mode = cp->rss_steer;
		port_role(p, cp);
		p->mtu = cp->mtu;
		p->min_mbufs = cp->mbufs;
		p->rx_desc = cp->rx_desc != 0 ? cp->rx_desc :
			profile_uint(cp->profile_doc, "rx_desc",
				info.default_rxportconf.ring_size != 0 ?
				info.default_rxportconf.ring_size : DEFAULT_DESC);
		p->tx_desc = cp->tx_desc != 0 ? cp->tx_desc :
			profile_uint(cp->profile_doc, "tx_desc",
				info.default_txportconf.ring_size != 0 ?
				info.default_txportconf.ring_size : DEFAULT_DESC);
		p->rx_offloads = offloads_from_profile(cp->profile_doc,
			"rx_offloads", true) & info.rx_offload_capa;
		p->tx_offloads = offloads_from_profile(cp->profile_doc,
			"tx_offloads", false) & info.tx_offload_capa;
		p->rss = cp->profile_doc == NULL ||
			!json_is_false(json_object_get(cp->profile_doc, "rss"));
		p->rss_required = cp->profile_doc != NULL &&
			json_is_true(json_object_get(cp->profile_doc, "rss"));
		ret = rte_eth_macaddr_get(p->port_id, &p->mac);
		if (ret != 0)
			memset(&p->mac, 0, sizeof(p->mac));
		/* the kernel_if's link-local (lib/excp gives it to the TAP) */
		p->has_ll6 = cp->kernel_if[0] != '\0';
		if (p->has_ll6)
			pa_port_link_local(p->mac.addr_bytes, p->ll6);
		PORT_LOG(INFO, "%s: port %u driver %s socket %d max queues rx %u tx %u",
			p->name, p->port_id, p->driver, p->socket, p->max_rxq,
			p->max_txq);
	}
	return 0;
fail:
	pa_port_close_all(ps);
	return ret;
}

static uint32_t
pool_size_for(const struct pa_port *p, const struct pa_port_setup_req *req,
		unsigned int cache)
{
	uint64_t n;

	/* Every place an mbuf of this port can wait: its own RX descriptors,
	 * any TX descriptors (it may leave by another port), the rings and
	 * bursts of the pipeline, and the per-lcore caches. */
	n = (uint64_t)p->nb_rxq * p->rx_desc;
	n += req->inflight;
	n += (uint64_t)req->n_lcores * req->burst * 2;
	n += (uint64_t)req->n_lcores * cache * 3 / 2;
	/* Replay of chained (jumbo) records: not every slot needs room for
	 * the longest packet. The replay polls only when a whole burst of the
	 * longest packets fits in the pool (backpressure), so a few such
	 * bursts beyond the one-segment figure keep it moving; rings then
	 * hold fewer jumbo packets than they could, never a deadlock.
	 * (Multiplying every slot by the segments wanted 262143 mbufs for a
	 * 64 KiB record in pipeline mode.) */
	if (req->segs_per_pkt > 1)
		n += (uint64_t)req->burst * req->segs_per_pkt *
			(req->n_lcores + 2);
	return (uint32_t)RTE_MIN(n, (uint64_t)UINT32_MAX / 2);
}

static int
setup_one(struct pa_port_set *ps, unsigned int idx,
		const struct pa_port_setup_req *req, char *err, size_t err_len)
{
	struct pa_port *p = &ps->port[idx];
	struct rte_eth_conf conf;
	struct rte_eth_dev_info info;
	struct rte_eth_rxconf rxconf;
	struct rte_eth_txconf txconf;
	char pool_name[RTE_MEMPOOL_NAMESIZE];
	uint32_t n, tx_desc_total = 0;
	unsigned int cache, q, i;
	uint16_t data_room;
	int ret;

	ret = rte_eth_dev_info_get(p->port_id, &info);
	if (ret != 0)
		goto fail_info;
	p->nb_rxq = RTE_MAX(1, RTE_MIN(req->nb_rxq[idx], p->max_rxq));
	p->nb_txq = RTE_MAX(1, RTE_MIN(req->nb_txq[idx], p->max_txq));
	p->tx_shared = req->tx_users[idx] > p->nb_txq;
	for (q = 0; q < PA_PORT_MAX_QUEUES; q++)
		rte_spinlock_init(&p->tx_lock[q]);

	if (p->nb_rxq > 1 && p->rss_required &&
	    info.flow_type_rss_offloads == 0) {
		pa_seterr(err, err_len,
			"port %s: %u RX queues with RSS asked for by the profile, but driver %s has no RSS (set \"rx_queues\": 1 on the port)",
			p->name, p->nb_rxq, p->driver);
		return -ENOTSUP;
	}
	memset(&conf, 0, sizeof(conf));
	conf.rxmode.offloads = p->rx_offloads;
	conf.txmode.offloads = p->tx_offloads;
	if (p->nb_rxq > 1 && p->rss && info.flow_type_rss_offloads != 0) {
		conf.rxmode.mq_mode = RTE_ETH_MQ_RX_RSS;
		/* the PMDs copy the key, never write it */
		conf.rx_adv_conf.rss_conf.rss_key =
			(uint8_t *)(uintptr_t)pa_port_sym_rss_key;
		conf.rx_adv_conf.rss_conf.rss_key_len =
			sizeof(pa_port_sym_rss_key);
		conf.rx_adv_conf.rss_conf.rss_hf = (RTE_ETH_RSS_IP |
			RTE_ETH_RSS_TCP | RTE_ETH_RSS_UDP) &
			info.flow_type_rss_offloads;
	}
	p->rss_on = conf.rxmode.mq_mode == RTE_ETH_MQ_RX_RSS;
	ret = rte_eth_dev_configure(p->port_id, p->nb_rxq, p->nb_txq, &conf);
	if (ret != 0) {
		pa_seterr(err, err_len, "port %s: configure %u rx / %u tx queues: %s",
			p->name, p->nb_rxq, p->nb_txq, rte_strerror(-ret));
		return ret;
	}
	p->configured = true;
	ret = rte_eth_dev_adjust_nb_rx_tx_desc(p->port_id, &p->rx_desc,
		&p->tx_desc);
	if (ret != 0) {
		pa_seterr(err, err_len, "port %s: descriptor counts: %s",
			p->name, rte_strerror(-ret));
		return ret;
	}
	if (p->mtu != 0) {
		ret = rte_eth_dev_set_mtu(p->port_id, p->mtu);
		if (ret != 0) {
			pa_seterr(err, err_len, "port %s: MTU %u: %s", p->name,
				p->mtu, rte_strerror(-ret));
			return ret;
		}
	} else if (rte_eth_dev_get_mtu(p->port_id, &p->mtu) != 0) {
		p->mtu = RTE_ETHER_MTU;
	}

	/* Buffers hold a full frame unless the port scatters. */
	data_room = RTE_MBUF_DEFAULT_BUF_SIZE;
	if (!(p->rx_offloads & RTE_ETH_RX_OFFLOAD_SCATTER) &&
	    (uint32_t)p->mtu + RTE_ETHER_HDR_LEN + RTE_ETHER_CRC_LEN +
	    2 * RTE_VLAN_HLEN + RTE_PKTMBUF_HEADROOM > data_room)
		data_room = RTE_MIN((uint32_t)UINT16_MAX,
			(uint32_t)p->mtu + RTE_ETHER_HDR_LEN +
			RTE_ETHER_CRC_LEN + 2 * RTE_VLAN_HLEN +
			RTE_PKTMBUF_HEADROOM);
	p->mbuf_data_room = data_room;

	for (i = 0; i < ps->n; i++)
		tx_desc_total += (uint32_t)ps->port[i].tx_desc *
			RTE_MAX(req->nb_txq[i], 1);
	cache = req->no_cache ? 0 : MAX_MEMPOOL_CACHE;
	n = RTE_MAX(pool_size_for(p, req, cache) + tx_desc_total,
		p->min_mbufs);
	/* A mempool is most efficient at 2^k - 1 objects. */
	n = rte_align32pow2(n + 1) - 1;
	if (cache > n / 16)
		cache = 0;
	p->pool_size = n;
	snprintf(pool_name, sizeof(pool_name), "pa_pool%u", idx);
	p->pool = rte_pktmbuf_pool_create(pool_name, n, cache, 0, data_room,
		p->socket);
	if (p->pool == NULL) {
		pa_seterr(err, err_len,
			"port %s: cannot create a pool of %u mbufs on socket %d: %s",
			p->name, n, p->socket, rte_strerror(rte_errno));
		return -rte_errno;
	}

	rxconf = info.default_rxconf;
	rxconf.offloads = conf.rxmode.offloads;
	for (q = 0; q < p->nb_rxq; q++) {
		ret = rte_eth_rx_queue_setup(p->port_id, q, p->rx_desc,
			p->socket, &rxconf, p->pool);
		if (ret != 0) {
			pa_seterr(err, err_len, "port %s: RX queue %u: %s",
				p->name, q, rte_strerror(-ret));
			return ret;
		}
	}
	txconf = info.default_txconf;
	txconf.offloads = conf.txmode.offloads;
	for (q = 0; q < p->nb_txq; q++) {
		ret = rte_eth_tx_queue_setup(p->port_id, q, p->tx_desc,
			p->socket, &txconf);
		if (ret != 0) {
			pa_seterr(err, err_len, "port %s: TX queue %u: %s",
				p->name, q, rte_strerror(-ret));
			return ret;
		}
	}
	ret = rte_eth_dev_start(p->port_id);
	if (ret != 0) {
		pa_seterr(err, err_len, "port %s: start: %s", p->name,
			rte_strerror(-ret));
		return ret;
	}
	p->started = true;
	ret = pa_port_rss_steer_init(p, p->rss_steer_mode);
	if (ret != 0)
		PORT_LOG(INFO, "%s: no RSS steering (%u RX queues): %s", p->name,
			p->nb_rxq, ret == -ENOTSUP ?
			"the driver does not say how it spreads packets" :
			rte_strerror(-ret));
	else if (p->steer != PA_PORT_STEER_OFF)
		PORT_LOG(INFO, "%s: RSS steering %s: key %u bytes, RETA %u entries, hash types 0x%" PRIx64,
			p->name, pa_port_steer_name(p->steer), p->rss_model.key_len,
			p->rss_model.reta_size, p->rss_model.hf);
	if (p->promisc) {
		ret = rte_eth_promiscuous_enable(p->port_id);
		if (ret != 0 && ret != -ENOTSUP)
			PORT_LOG(WARNING, "%s: promiscuous mode: %s", p->name,
				rte_strerror(-ret));
	}
	PORT_LOG(INFO, "%s: started, %u rx / %u tx queues%s, %u/%u descriptors, pool %u mbufs (cache %u) on socket %d",
		p->name, p->nb_rxq, p->nb_txq, p->tx_shared ? " (shared)" : "",
		p->rx_desc, p->tx_desc, n, cache, p->socket);
	return 0;

fail_info:
	pa_seterr(err, err_len, "port %s: no device info: %s", p->name,
		rte_strerror(-ret));
	return ret;
}

int
pa_port_setup(struct pa_port_set *ps, const struct pa_port_setup_req *req,
		char *err, size_t err_len)
{
	unsigned int i;
	int ret;

	for (i = 0; i < ps->n; i++) {
		ret = setup_one(ps, i, req, err, err_len);
		if (ret != 0) {
			pa_port_stop_all(ps);
			return ret;
		}
	}
	return 0;
}

void
pa_port_stop_all(struct pa_port_set *ps)
{
	unsigned int i;
	int ret;

	for (i = 0; i < ps->n; i++) {
		struct pa_port *p = &ps->port[i];

		if (!p->started)
			continue;
		ret = rte_eth_dev_stop(p->port_id);
		if (ret != 0)
			PORT_LOG(WARNING, "%s: stop: %s", p->name,
				rte_strerror(-ret));
		p->started = false;
	}
}

void
pa_port_close_all(struct pa_port_set *ps)
{
	struct rte_eth_dev_info info;
	unsigned int i;

	pa_port_stop_all(ps);
	for (i = 0; i < ps->n; i++) {
		struct pa_port *p = &ps->port[i];
		struct rte_device *dev = NULL;

		if (p->port_id == UINT16_MAX)
			continue;
		if (p->probed_by_us &&
		    rte_eth_dev_info_get(p->port_id, &info) == 0)
			dev = info.device;
		rte_eth_dev_close(p->port_id);
		if (dev != NULL)
			rte_dev_remove(dev);
		ps->index_of[p->port_id] = UINT16_MAX;
		p->port_id = UINT16_MAX;
		p->configured = false;
	}
}

unsigned int
pa_port_mbufs_in_use(const struct pa_port_set *ps)
{
	unsigned int i, n = 0;

	for (i = 0; i < ps->n; i++)
		if (ps->port[i].pool != NULL)
			n += rte_mempool_in_use_count(ps->port[i].pool);
	return n;
}

void
pa_port_free_pools(struct pa_port_set *ps)
{
	unsigned int i;

	for (i = 0; i < ps->n; i++) {
		rte_mempool_free(ps->port[i].pool);
		ps->port[i].pool = NULL;
	}
}

void
pa_port_snapshot(const struct pa_port_set *ps, unsigned int i,
		struct pa_port_snapshot *o)
{
	const struct pa_port *p = &ps->port[i];
	struct rte_eth_stats st;
	struct rte_eth_link link;

	memset(&st, 0, sizeof(st));
	memset(&link, 0, sizeof(link));
	if (p->port_id != UINT16_MAX) {
		rte_eth_stats_get(p->port_id, &st);
		rte_eth_link_get_nowait(p->port_id, &link);
	}
	snprintf(o->name, sizeof(o->name), "%s", p->name);
	snprintf(o->driver, sizeof(o->driver), "%s", p->driver);
	o->port_id = p->port_id;
	o->socket = p->socket;
	o->link_up = link.link_status != 0;
	o->speed_mbps = link.link_speed;
	o->rx_packets = st.ipackets;
	o->tx_packets = st.opackets;
	o->rx_bytes = st.ibytes;
	o->tx_bytes = st.obytes;
	o->rx_missed = st.imissed;
	o->rx_errors = st.ierrors;
	o->tx_errors = st.oerrors;
	o->rx_nombuf = st.rx_nombuf;
	o->rx_queues = p->nb_rxq;
	o->tx_queues = p->nb_txq;
	o->rx_desc = p->rx_desc;
	o->tx_desc = p->tx_desc;
	o->mbufs_in_use = p->pool != NULL ?
		rte_mempool_in_use_count(p->pool) : 0;
	o->pool_size = p->pool_size;
	o->rss_steer = pa_port_steer_name(p->steer);
}
