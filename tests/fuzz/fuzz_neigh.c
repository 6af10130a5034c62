/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fuzz_neigh: raw frames into lib/neigh, the untrusted-input side of the
 * neighbour subsystem.
 *
 * Each input is one Ethernet frame. It goes
 *  - to pa_neigh_parse() as an exact-size copy (ASan sees any read past
 *    its length); a frame it accepts must parse the same from a longer
 *    buffer (trailing bytes never change the answer's fields we use);
 *  - through lib/pkt's parser and the rx stage's classification
 *    (pa_neigh_rx_classify()) as a 2-segment chain;
 *  - to the control side (its rx ring, pa_neigh_poll()) of a subsystem
 *    with two ports' addresses, a gateway and local addresses: every frame
 *    it sends in answer must be one pa_neigh_parse() accepts, on the port
 *    the input came from; the cache stays within its bound.
 * The subsystem lives across inputs (its cache is state to fuzz too);
 * time advances a second per input so that the timers run.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "fuzz_common.h"
#include "pa_config.h"
#include "pa_neigh.h"
#include "pa_pkt.h"
#include "pa_port.h"

#define TARGET		"fuzz_neigh"
#define FRAME_MAX	4096
#define MAX_ENTRIES	16

static struct rte_mempool *pool;
static struct pa_config *cfg;
static struct pa_port_set ports;
static struct pa_neigh *nb;
static uint64_t now = 1000000;

static const char CONF[] =
	"{\"ports\": [{\"name\": \"p0\", \"devargs\": \"net_null0\","
	" \"addr\": [\"198.51.100.5/24\", \"2001:db8:1::5/64\"],"
	" \"gateway\": \"198.51.100.1\"},"
	" {\"name\": \"p1\", \"devargs\": \"net_null1\","
	" \"addr\": [\"203.0.113.5/24\", \"2001:db8:2::5/64\"]}],"
	" \"lb\": {\"local_addr\": \"192.0.2.254\","
	" \"local_addr6\": \"2001:db8::fe\"}}";

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	char err[PA_CONFIG_ERR_MAX];
	struct pa_neigh_opts o;
	unsigned int i;

	fuzz_eal_init(TARGET);
	if (pa_pkt_init() != 0)
		fuzz_fail(TARGET, "pa_pkt_init failed");
	pool = rte_pktmbuf_pool_create(TARGET, 2047, 0, 0,
		RTE_PKTMBUF_HEADROOM + FRAME_MAX, SOCKET_ID_ANY);
	if (pool == NULL)
		fuzz_fail(TARGET, "no mbuf pool");
	cfg = pa_config_load_string(CONF, NULL, err, sizeof(err));
	if (cfg == NULL)
		fuzz_fail(TARGET, "config: %s", err);
	memset(&ports, 0, sizeof(ports));
	memset(ports.index_of, 0xff, sizeof(ports.index_of));
	ports.n = 2;
	for (i = 0; i < 2; i++) {
		ports.port[i].port_id = (uint16_t)i;
		ports.port[i].pool = pool;
		ports.port[i].mac.addr_bytes[0] = 0x02;
		ports.port[i].mac.addr_bytes[5] = (uint8_t)(0xa0 + i);
		snprintf(ports.port[i].name, sizeof(ports.port[i].name), "p%u",
			i);
		ports.index_of[i] = (uint16_t)i;
	}
	memset(&o, 0, sizeof(o));
	o.cfg = cfg;
	o.ports = &ports;
	o.max_entries = MAX_ENTRIES;
	nb = pa_neigh_create(&o, now, err, sizeof(err));
	if (nb == NULL)
		fuzz_fail(TARGET, "pa_neigh_create: %s", err);
	return 0;
}

static struct rte_mbuf *
chain(const uint8_t *data, uint32_t len, uint32_t split, uint16_t port)
{
	struct rte_mbuf *m1 = rte_pktmbuf_alloc(pool), *m2;
	char *p;

	if (m1 == NULL)
		fuzz_fail(TARGET, "out of mbufs");
	m1->port = port;
	if (split == 0 || split >= len) {
		p = rte_pktmbuf_append(m1, (uint16_t)len);
		memcpy(p, data, len);
		return m1;
	}
	m2 = rte_pktmbuf_alloc(pool);
	if (m2 == NULL)
		fuzz_fail(TARGET, "out of mbufs");
	memcpy(rte_pktmbuf_append(m1, (uint16_t)split), data, split);
	memcpy(rte_pktmbuf_append(m2, (uint16_t)(len - split)), data + split,
		len - split);
	if (rte_pktmbuf_chain(m1, m2) != 0)
		fuzz_fail(TARGET, "cannot chain");
	return m1;
}

static void
check_sent(unsigned int port)
{
	uint8_t buf[FRAME_MAX];
	struct pa_neigh_msg msg;
	struct rte_mbuf *m;
	uint32_t len;
	int ret;

	while (rte_ring_dequeue(pa_neigh_tx_ring(nb, port), (void **)&m) == 0) {
		len = rte_pktmbuf_pkt_len(m);
		if (len > sizeof(buf))
			fuzz_fail(TARGET, "sent a %u-byte frame", len);
		memcpy(buf, rte_pktmbuf_read(m, 0, len, buf), len);
		rte_pktmbuf_free(m);
		ret = pa_neigh_parse(buf, len, &msg);
		if (ret != 0)
			fuzz_fail(TARGET, "sent a frame it refuses itself (%s)",
				pa_neigh_bad_name(ret));
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pa_neigh_msg a, b;
	uint32_t len = (uint32_t)(size > FRAME_MAX ? FRAME_MAX : size);
	uint16_t port = len > 0 ? data[len - 1] & 1 : 0;
	struct rte_mbuf *m;
	uint8_t *copy, *longer;
	int ra, rb, v;

	copy = malloc(len + 1);
	longer = malloc(len + 64);
	if (copy == NULL || longer == NULL)
		fuzz_fail(TARGET, "out of memory");
	memcpy(copy, data, len);
	ra = pa_neigh_parse(copy, len, &a);
	memcpy(longer, data, len);
	memset(longer + len, 0xa5, 64);
	rb = pa_neigh_parse(longer, len, &b);
	if (ra != rb || (ra == 0 && memcmp(&a, &b, sizeof(a)) != 0))
		fuzz_fail(TARGET, "the parse read past the frame");
	free(copy);
	free(longer);

	/* the rx stage */
	m = chain(data, len, len > 20 ? data[0] % len : 0, port);
	if (pa_pkt_parse_mbuf(m) == 0) {
		v = pa_neigh_rx_classify(pa_neigh_fast(nb), m, pa_pkt_meta(m),
			port);
		if (v != PA_NEIGH_RX_PASS && v != PA_NEIGH_RX_LOCAL &&
		    v != PA_NEIGH_RX_MALFORMED)
			fuzz_fail(TARGET, "classify: %d", v);
	}
	/* the control side, whatever the rx stage said */
	if (rte_ring_enqueue(pa_neigh_rx_ring(nb), m) != 0)
		fuzz_fail(TARGET, "rx ring full");
	now += 1000;
	pa_neigh_poll(nb, now);
	check_sent(0);
	check_sent(1);
	if (!pa_neigh_idle(nb))
		fuzz_fail(TARGET, "not idle after a poll");
	return 0;
}
