/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fuzz_pkt: raw frames into the rx stage's parser (lib/pkt/).
 *
 * Each input is one Ethernet frame. It is parsed
 *  - whole, by the inline fast path pa_pkt_parse() and by the general
 *    parser pa_pkt_parse_full(): both must give the same result and, on
 *    success, the same metadata (pa_pkt_inline.h: "two parsers, one
 *    contract"); on success pa_pkt_flow_key_raw() builds its key;
 *  - from a first segment cut short (a copy of exactly that many bytes, so
 *    that ASan sees any read past seg_len): SEGMENT, or the whole-frame
 *    answer;
 *  - as a 2-segment mbuf chain by pa_pkt_parse_mbuf(): the whole-frame
 *    answer (or ERR_EXT for headers past PA_PKT_HDR_MAX), and on success
 *    the same flow key from pa_pkt_flow_key().
 * Any disagreement aborts: it is a parser bug.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "fuzz_common.h"
#include "pa_pkt.h"

#define TARGET		"fuzz_pkt"
#define FRAME_MAX	16384	/* longer inputs are cut here */
#define N_SPLITS	4

static struct rte_mempool *pool;

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fuzz_eal_init(TARGET);
	if (pa_pkt_init() != 0)
		fuzz_fail(TARGET, "pa_pkt_init failed");
	pool = rte_pktmbuf_pool_create(TARGET, 63, 0, 0,
		RTE_PKTMBUF_HEADROOM + FRAME_MAX, SOCKET_ID_ANY);
	if (pool == NULL)
		fuzz_fail(TARGET, "no mbuf pool");
	return 0;
}

static bool
meta_equal(const struct pa_pkt_meta *a, const struct pa_pkt_meta *b)
{
	return a->hash == b->hash && a->flags == b->flags &&
		a->l3_off == b->l3_off && a->l4_off == b->l4_off &&
		a->sport == b->sport && a->dport == b->dport &&
		a->l4_proto == b->l4_proto && a->vlan_count == b->vlan_count;
}

static void
check_same(const char *what, int ret, const struct pa_pkt_meta *meta,
		int want, const struct pa_pkt_meta *want_meta)
{
	if (ret != want)
		fuzz_fail(TARGET, "%s returned %d, the whole-frame parse %d",
			what, ret, want);
	if (ret == PA_PKT_OK && !meta_equal(meta, want_meta))
		fuzz_fail(TARGET, "%s: metadata differs from the whole-frame parse",
			what);
}

/* First segment of @p split bytes, the rest in a second segment. */
static void
check_chain(const uint8_t *data, uint32_t len, uint32_t split, int want,
		const struct pa_pkt_meta *want_meta, int want_key_ret,
		const struct pa_flow_key *want_key)
{
	struct rte_mbuf *m1, *m2;
	struct pa_flow_key key;
	char *p;
	int ret;

	m1 = rte_pktmbuf_alloc(pool);
	m2 = rte_pktmbuf_alloc(pool);
	if (m1 == NULL || m2 == NULL)
		fuzz_fail(TARGET, "mbuf pool exhausted (leak?)");
	p = rte_pktmbuf_append(m1, (uint16_t)split);
	if (p == NULL && split > 0)
		fuzz_fail(TARGET, "cannot append %u bytes", split);
	if (split > 0)
		memcpy(p, data, split);
	p = rte_pktmbuf_append(m2, (uint16_t)(len - split));
	if (p == NULL)
		fuzz_fail(TARGET, "cannot append %u bytes", len - split);
	memcpy(p, data + split, len - split);
	if (rte_pktmbuf_chain(m1, m2) != 0)
		fuzz_fail(TARGET, "cannot chain");

	ret = pa_pkt_parse_mbuf(m1);
	if (ret == PA_PKT_ERR_EXT && want != PA_PKT_ERR_EXT &&
			len > PA_PKT_HDR_MAX)
		goto out;	/* headers beyond what is gathered */
	check_same("pa_pkt_parse_mbuf (2 segments)", ret, pa_pkt_meta(m1),
		want, want_meta);
	if (ret == PA_PKT_OK) {
		ret = pa_pkt_flow_key(m1, pa_pkt_meta(m1), &key);
		if (ret != want_key_ret || (ret == 0 &&
				memcmp(&key, want_key, sizeof(key)) != 0))
			fuzz_fail(TARGET, "pa_pkt_flow_key on the chain (split %u) differs from pa_pkt_flow_key_raw",
				split);
	}
out:
	rte_pktmbuf_free(m1);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pa_pkt_meta fast, full, part;
	struct pa_flow_key key;
	uint32_t len = size > FRAME_MAX ? FRAME_MAX : (uint32_t)size;
	uint32_t splits[N_SPLITS];
	int ret, ret_full, key_ret = -1;
	unsigned int i;
	uint8_t *seg;

	memset(&fast, 0, sizeof(fast));
	memset(&full, 0, sizeof(full));
	memset(&key, 0, sizeof(key));
	ret = pa_pkt_parse(data, len, len, &fast);
	ret_full = pa_pkt_parse_full(data, len, len, &full);
	if (ret == PA_PKT_ERR_SEGMENT)
		fuzz_fail(TARGET, "SEGMENT with the whole frame in one segment");
	check_same("pa_pkt_parse_full", ret_full, &full, ret, &fast);
	if (ret == PA_PKT_OK)
		key_ret = pa_pkt_flow_key_raw(data, &fast, &key);
	if (len < 2)
		return 0;

	/* after Ethernet, IPv4 and a VLAN tag or two; halfway; input-driven */
	splits[0] = 14;
	splits[1] = 34 + (data[len - 1] & 7) * 4;
	splits[2] = len / 2;
	splits[3] = 1 + (uint32_t)(data[0] ^ data[len - 1]) % (len - 1);
	for (i = 0; i < N_SPLITS; i++) {
		uint32_t s = splits[i];

		if (s == 0 || s >= len)
			continue;
		seg = malloc(s);
		if (seg == NULL)
			abort();
		memcpy(seg, data, s);
		memset(&part, 0, sizeof(part));
		ret_full = pa_pkt_parse(seg, s, len, &part);
		if (ret_full != PA_PKT_ERR_SEGMENT)
			check_same("pa_pkt_parse (first segment only)",
				ret_full, &part, ret, &fast);
		free(seg);
		check_chain(data, len, s, ret, &fast, key_ret, &key);
	}
	return 0;
}
