/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * RSS in software: the RX queue a device's Toeplitz hash and redirection
 * table give a flow's packets (pa_port.h, "RSS steering"), so that the
 * data path can tell which worker receives a flow it did not receive
 * (an ICMP error quoting it). The model of each port is read back from
 * the device once it is started (key, hash types, RETA), or is the
 * appliance's own (rss_steer "toeplitz").
 */
#include <errno.h>
#include <netinet/in.h>
#include <string.h>

#include <rte_byteorder.h>
#include <rte_ethdev.h>
#include <rte_thash.h>

#include "pa_port.h"

/* Hash types that give TCP / UDP packets their ports in the hash. */
#define HF_V4	(RTE_ETH_RSS_IPV4 | RTE_ETH_RSS_FRAG_IPV4 | \
		 RTE_ETH_RSS_NONFRAG_IPV4_OTHER)
#define HF_V6	(RTE_ETH_RSS_IPV6 | RTE_ETH_RSS_FRAG_IPV6 | \
		 RTE_ETH_RSS_NONFRAG_IPV6_OTHER | RTE_ETH_RSS_IPV6_EX)

static uint32_t
rd32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
		(uint32_t)p[2] << 8 | p[3];
}

int
pa_port_rss_model_set(struct pa_port_rss *r, const uint8_t *key,
		unsigned int key_len, uint64_t hf, const uint16_t *reta,
		unsigned int reta_size)
{
	/* rte_softrss() reads one key word past the input: an IPv6 4-tuple
	 * (9 words) needs 40 bytes */
	if (key_len < PA_PORT_RSS_KEY_MIN || key_len > PA_PORT_RSS_KEY_MAX ||
	    reta_size == 0 || reta_size > PA_PORT_RSS_RETA_MAX)
		return -EINVAL;
	memset(r, 0, sizeof(*r));
	memcpy(r->key, key, key_len);
	r->key_len = (uint8_t)key_len;
	r->hf = hf;
	r->reta_size = (uint16_t)reta_size;
	memcpy(r->reta, reta, reta_size * sizeof(reta[0]));
	return 0;
}

uint32_t
pa_port_rss_hash(const struct pa_port_rss *r, uint8_t family, uint8_t proto,
		const uint8_t *src, const uint8_t *dst, uint16_t sport,
		uint16_t dport)
{
	uint32_t t[9];
	unsigned int n = 0, i;
	uint64_t l4 = 0, l3;

	if (family == 4) {
		l3 = HF_V4;
		if (proto == IPPROTO_TCP)
			l4 = RTE_ETH_RSS_NONFRAG_IPV4_TCP;
		else if (proto == IPPROTO_UDP)
			l4 = RTE_ETH_RSS_NONFRAG_IPV4_UDP;
		else if (proto == IPPROTO_SCTP)
			l4 = RTE_ETH_RSS_NONFRAG_IPV4_SCTP;
		t[n++] = rd32(src);
		t[n++] = rd32(dst);
	} else {
		l3 = HF_V6;
		if (proto == IPPROTO_TCP)
			l4 = RTE_ETH_RSS_NONFRAG_IPV6_TCP;
		else if (proto == IPPROTO_UDP)
			l4 = RTE_ETH_RSS_NONFRAG_IPV6_UDP;
		else if (proto == IPPROTO_SCTP)
			l4 = RTE_ETH_RSS_NONFRAG_IPV6_SCTP;
		for (i = 0; i < 4; i++)
			t[n++] = rd32(src + 4 * i);
		for (i = 0; i < 4; i++)
			t[n++] = rd32(dst + 4 * i);
	}
	if (l4 != 0 && (r->hf & l4))
		t[n++] = (uint32_t)sport << 16 | dport;
	else if (!(r->hf & l3))
		return 0;	/* not hashed: the device's queue of hash 0 */
	return rte_softrss(t, n, r->key);
}

#define TOEPLITZ_RETA	128

int
pa_port_rss_steer_init(struct pa_port *p, enum pa_config_rss_steer mode)
{
	uint16_t reta[PA_PORT_RSS_RETA_MAX];
	struct rte_eth_rss_reta_entry64 conf[PA_PORT_RSS_RETA_MAX /
		RTE_ETH_RETA_GROUP_SIZE];
	struct rte_eth_rss_conf rc;
	struct rte_eth_dev_info info;
	uint8_t key[PA_PORT_RSS_KEY_MAX];
	unsigned int i;
	int ret;

	p->steer = PA_PORT_STEER_OFF;
	if (mode == PA_CONFIG_RSS_STEER_OFF || p->nb_rxq < 2)
		return 0;
	if (mode == PA_CONFIG_RSS_STEER_TOEPLITZ) {
		for (i = 0; i < TOEPLITZ_RETA; i++)
			reta[i] = (uint16_t)(i % p->nb_rxq);
		ret = pa_port_rss_model_set(&p->rss_model, pa_port_sym_rss_key,
			sizeof(pa_port_sym_rss_key), RTE_ETH_RSS_IP |
			RTE_ETH_RSS_TCP | RTE_ETH_RSS_UDP, reta, TOEPLITZ_RETA);
		if (ret == 0)
			p->steer = PA_PORT_STEER_TOEPLITZ;
		return ret;
	}
	/* auto: what the device does, when it says */
	if (!p->rss_on)
		return -ENOTSUP;
	ret = rte_eth_dev_info_get(p->port_id, &info);
	if (ret != 0)
		return ret;
	if (info.reta_size == 0 || info.reta_size > PA_PORT_RSS_RETA_MAX ||
	    info.hash_key_size < PA_PORT_RSS_KEY_MIN ||
	    info.hash_key_size > PA_PORT_RSS_KEY_MAX)
		return -ENOTSUP;
	memset(&rc, 0, sizeof(rc));
	rc.rss_key = key;
	rc.rss_key_len = info.hash_key_size;
	ret = rte_eth_dev_rss_hash_conf_get(p->port_id, &rc);
	if (ret != 0)
		return ret;
	memset(conf, 0, sizeof(conf));
	for (i = 0; i < info.reta_size; i++)
		conf[i / RTE_ETH_RETA_GROUP_SIZE].mask |=
			UINT64_C(1) << (i % RTE_ETH_RETA_GROUP_SIZE);
	ret = rte_eth_dev_rss_reta_query(p->port_id, conf, info.reta_size);
	if (ret != 0)
		return ret;
	for (i = 0; i < info.reta_size; i++) {
		reta[i] = conf[i / RTE_ETH_RETA_GROUP_SIZE].reta[i %
			RTE_ETH_RETA_GROUP_SIZE];
		if (reta[i] >= p->nb_rxq)
			return -ERANGE;
	}
	ret = pa_port_rss_model_set(&p->rss_model, key, info.hash_key_size,
		rc.rss_hf, reta, info.reta_size);
	if (ret == 0)
		p->steer = PA_PORT_STEER_DEVICE;
	return ret;
}

const char *
pa_port_steer_name(enum pa_port_steer s)
{
	switch (s) {
	case PA_PORT_STEER_DEVICE:
		return "device";
	case PA_PORT_STEER_TOEPLITZ:
		return "toeplitz";
	default:
		return "off";
	}
}
