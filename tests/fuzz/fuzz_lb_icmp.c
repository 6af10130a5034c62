/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fuzz_lb_icmp: ICMP messages to VIPs through the lb stage (lib/lb's
 * ICMP path: echo replies, quoted errors forwarded to a flow's backend,
 * the quote parser), and the too-big builder and the MSS clamp on the
 * same bytes.
 *
 * Input: byte 0 picks the family (bit 0: IPv6) and the VIP (bits 1-2:
 * an ipip, nat or dsr service's, or an address of none); the rest is the
 * ICMP message (type, code, checksum, ..., the quote) behind an Ethernet
 * and IP header made for it (lengths right, so that most inputs parse).
 * The frame is parsed (lib/pkt); a frame that parses goes through
 * pa_lb_process(), which must give a known verdict and leave a frame no
 * longer than its input plus an outer header. The same frame, as a
 * TCP/UDP packet too big for a tunnel, goes through lb_icmp_too_big()
 * (its result must parse), and the message's bytes through
 * lb_mss_clamp() as a TCP header.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <rte_ether.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "fuzz_common.h"
#include "pa_config.h"
#include "pa_lb.h"
#include "pa_pkt.h"
#include "lb_priv.h"

#define TARGET		"fuzz_lb_icmp"
#define MSG_MAX		2048

static struct rte_mempool *pool;
static struct pa_config *cfg;
static struct pa_lb *lb;

static const char conf[] =
	"{\"lb\": {\"local_addr\": \"192.0.2.1\", \"local_addr6\": \"2001:db8::1\","
	" \"flow_table\": {\"size\": 4096},"
	" \"services\": ["
	"{\"name\": \"i4\", \"vip\": \"10.0.0.10\", \"port\": 80, \"proto\": \"tcp\","
	" \"scheduler\": \"rr\", \"mss_clamp\": 1200,"
	" \"backends\": [{\"addr\": \"10.1.0.1\"}, {\"addr\": \"10.1.0.2\"}]},"
	"{\"name\": \"n4\", \"vip\": \"10.0.0.20\", \"port\": 53, \"proto\": \"udp\","
	" \"forward\": \"nat\", \"backends\": [{\"addr\": \"10.2.0.1\", \"port\": 5353}]},"
	"{\"name\": \"d4\", \"vip\": \"10.0.0.30\", \"port\": 80, \"proto\": \"tcp\","
	" \"forward\": \"dsr\", \"backends\": [{\"addr\": \"10.3.0.1\","
	" \"mac\": \"02:00:00:00:03:01\"}]},"
	"{\"name\": \"i6\", \"vip\": \"2001:db8:10::10\", \"port\": 80, \"proto\": \"tcp\","
	" \"backends\": [{\"addr\": \"2001:db8:1::1\"}]},"
	"{\"name\": \"n6\", \"vip\": \"2001:db8:20::20\", \"port\": 53, \"proto\": \"udp\","
	" \"forward\": \"nat\", \"backends\": [{\"addr\": \"2001:db8:2::1\", \"port\": 5353}]},"
	"{\"name\": \"d6\", \"vip\": \"2001:db8:30::30\", \"port\": 80, \"proto\": \"tcp\","
	" \"forward\": \"dsr\", \"backends\": [{\"addr\": \"2001:db8:3::1\","
	" \"mac\": \"02:00:00:00:03:02\"}]}]}}";

static const uint8_t vip4[4][4] = {
	{ 10, 0, 0, 10 }, { 10, 0, 0, 20 }, { 10, 0, 0, 30 }, { 10, 0, 0, 99 },
};
static const uint8_t vip6_last[4] = { 0x10, 0x20, 0x30, 0x99 };

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	char err[PA_CONFIG_ERR_MAX];
	struct pa_lb_opts o;

	fuzz_eal_init(TARGET);
	if (pa_pkt_init() != 0)
		fuzz_fail(TARGET, "pa_pkt_init failed");
	pool = rte_pktmbuf_pool_create(TARGET, 63, 0, 0,
		RTE_PKTMBUF_HEADROOM + 4096, SOCKET_ID_ANY);
	if (pool == NULL)
		fuzz_fail(TARGET, "no mbuf pool");
	cfg = pa_config_load_string(conf, NULL, err, sizeof(err));
	if (cfg == NULL)
		fuzz_fail(TARGET, "config: %s", err);
	memset(&o, 0, sizeof(o));
	o.n_lcores = 1;
	o.cfg = cfg;
	lb = pa_lb_create(&o, err, sizeof(err));
	if (lb == NULL)
		fuzz_fail(TARGET, "pa_lb_create: %s", err);
	return 0;
}

/* Ethernet + IP (router -> the chosen VIP) + @p msg as its payload of
 * protocol @p proto. @return the frame's length. */
static uint32_t
frame_of(uint8_t *f, bool v6, unsigned int vip, uint8_t proto,
		const uint8_t *msg, uint32_t n)
{
	static const uint8_t me[6] = { 2, 0, 0, 0, 0, 1 };
	static const uint8_t peer[6] = { 2, 0, 0, 0, 0, 0xaa };
	uint8_t *ip = f + 14;
	uint32_t iph = v6 ? 40 : 20;

	memcpy(f, me, 6);
	memcpy(f + 6, peer, 6);
	f[12] = v6 ? 0x86 : 0x08;
	f[13] = v6 ? 0xdd : 0x00;
	memset(ip, 0, iph);
	if (v6) {
		ip[0] = 0x60;
		ip[4] = (uint8_t)(n >> 8);
		ip[5] = (uint8_t)n;
		ip[6] = proto;
		ip[7] = 64;
		ip[8] = 0x20;
		ip[9] = 0x01;
		ip[10] = 0x0d;
		ip[11] = 0xb8;
		ip[23] = 1;
		memcpy(ip + 24, ip + 8, 16);
		ip[24 + 5] = vip6_last[vip];
		ip[24 + 15] = vip6_last[vip];
	} else {
		ip[0] = 0x45;
		ip[2] = (uint8_t)((n + iph) >> 8);
		ip[3] = (uint8_t)(n + iph);
		ip[6] = 0x40;	/* DF */
		ip[8] = 64;
		ip[9] = proto;
		ip[12] = 203;
		ip[13] = 0;
		ip[14] = 113;
		ip[15] = 1;
		memcpy(ip + 16, vip4[vip], 4);
	}
	memcpy(ip + iph, msg, n);
	return 14 + iph + n;
}

static struct rte_mbuf *
mbuf_of(const uint8_t *f, uint32_t len)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(pool);
	char *p;

	if (m == NULL)
		fuzz_fail(TARGET, "mbuf pool empty (leak?)");
	p = rte_pktmbuf_append(m, (uint16_t)len);
	if (p == NULL)
		fuzz_fail(TARGET, "no room for %u bytes", len);
	memcpy(p, f, len);
	return m;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint64_t now = 1000000000ULL;
	uint8_t frame[MSG_MAX + 64], tcp[MSG_MAX];
	struct rte_mbuf *m;
	uint32_t n, len;
	unsigned int vip;
	uint8_t v;
	bool v6;

	if (size < 1)
		return 0;
	v6 = data[0] & 1;
	vip = (data[0] >> 1) & 3;
	n = (uint32_t)RTE_MIN(size - 1, (size_t)MSG_MAX);
	len = frame_of(frame, v6, vip, v6 ? IPPROTO_ICMPV6 : IPPROTO_ICMP,
		data + 1, n);

	/* the lb stage */
	m = mbuf_of(frame, len);
	if (pa_pkt_parse_mbuf(m) == PA_PKT_OK) {
		pa_pkt_meta(m)->out_port = 0;
		v = 0xee;
		now += 1000;
		pa_lb_process(lb, 0, &m, 1, now, &v);
		if (v > PA_LB_V_ICMP_NO_SERVICE)
			fuzz_fail(TARGET, "verdict %u", v);
		if (rte_pktmbuf_pkt_len(m) > len + 40)
			fuzz_fail(TARGET, "frame grew from %u to %u", len,
				rte_pktmbuf_pkt_len(m));
		pa_lb_poll(lb, 0, now, true);
	}
	rte_pktmbuf_free(m);

	/* the same bytes as a TCP segment too big for a tunnel */
	len = frame_of(frame, v6, vip, IPPROTO_TCP, data + 1, n);
	m = mbuf_of(frame, len);
	if (pa_pkt_parse_mbuf(m) == PA_PKT_OK &&
	    (pa_pkt_meta(m)->flags & PA_PKT_F_L4) &&
	    lb_icmp_too_big(m, pa_pkt_meta(m), 1400, NULL) == 0 &&
	    pa_pkt_parse_mbuf(m) != PA_PKT_OK)
		fuzz_fail(TARGET, "the too-big message does not parse");
	rte_pktmbuf_free(m);

	/* and as a TCP header whose options are clamped */
	if (n >= 20) {
		memcpy(tcp, data + 1, n);
		lb_mss_clamp(tcp, n, 1200);
	}
	return 0;
}
