/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The ACL's data path: classify a burst on the live table (keys, the
 * lcore's flow cache, lookups in every context of both tiers for the keys
 * it does not know), count the hits, mark and police; and trace_packet's
 * lookup of one described packet with the same code (no cache).
 */
#include <errno.h>
#include <stddef.h>
#include <string.h>

#include <rte_acl.h>
#include <rte_branch_prediction.h>
#include <rte_byteorder.h>
#include <rte_cycles.h>
#include <rte_ip.h>
#include <rte_mbuf.h>
#include <rte_meter.h>
#include <rte_prefetch.h>

#include "acl_priv.h"

#define ACL_MAX_BURST		256
#define ACL_PORT_ANY		0xff

/* The protocols whose keys carry ports: one load, not three compares. */
static const uint8_t port_proto[256] = {
	[IPPROTO_TCP] = 1, [IPPROTO_UDP] = 1, [IPPROTO_SCTP] = 1,
};

static __rte_always_inline bool
has_ports(const struct pa_pkt_meta *meta)
{
	return ((meta->flags & (PA_PKT_F_L4 | PA_PKT_F_FRAG_LATER)) ==
		PA_PKT_F_L4) & port_proto[meta->l4_proto];
}

/* The parser saw the @p len bytes of the IP header at l3_off (within
 * pkt_len): in the first segment, as a rule; else gathered. */
static __rte_always_inline const uint8_t *
l3_bytes(const struct rte_mbuf *m, const struct pa_pkt_meta *meta,
		uint32_t len, uint8_t *buf)
{
	if (likely((uint32_t)meta->l3_off + len <= rte_pktmbuf_data_len(m)))
		return rte_pktmbuf_mtod_offset(m, const uint8_t *,
			meta->l3_off);
	return rte_pktmbuf_read(m, meta->l3_off, len, buf);
}

/*
 * The keys' first 8 bytes (struct acl_key4 and acl_key6 alike): proto,
 * its pad, in_port, ports_known and pad1 (0: rte_acl reads it with
 * in_port), in one store. @p in_head: key_in_head() of the packet's
 * in_port (the same for a burst, as a rule).
 */
static __rte_always_inline uint64_t
key_in_head(uint8_t in_port)
{
	return (uint64_t)in_port << 32;
}

static __rte_always_inline void
key_head(void *k, uint8_t proto, uint64_t in_head, bool ports)
{
	uint64_t w = (uint64_t)proto | in_head | (uint64_t)ports << 40;

	RTE_BUILD_BUG_ON(offsetof(struct acl_key4, in_port) != 4 ||
		offsetof(struct acl_key4, ports_known) != 5 ||
		offsetof(struct acl_key4, pad1) != 6 ||
		offsetof(struct acl_key4, src) != 8 ||
		offsetof(struct acl_key4, dst) != 12 ||
		offsetof(struct acl_key4, dport) !=
			offsetof(struct acl_key4, sport) + 2);
	RTE_BUILD_BUG_ON(offsetof(struct acl_key6, in_port) != 4 ||
		offsetof(struct acl_key6, ports_known) != 5 ||
		offsetof(struct acl_key6, pad1) != 6 ||
		offsetof(struct acl_key6, src) != 8 ||
		offsetof(struct acl_key6, dst) != 24 ||
		offsetof(struct acl_key6, dport) !=
			offsetof(struct acl_key6, sport) + 2);
	w = rte_cpu_to_le_64(w);
	memcpy(k, &w, sizeof(w));
}

/* The key's sport and dport (network order, adjacent) from the
 * metadata's (host order, adjacent): one load, one store. */
static __rte_always_inline void
key_ports(uint16_t *sport, const struct pa_pkt_meta *meta)
{
	uint32_t p;

	RTE_BUILD_BUG_ON(offsetof(struct pa_pkt_meta, dport) !=
		offsetof(struct pa_pkt_meta, sport) + 2);
	memcpy(&p, &meta->sport, sizeof(p));
#if RTE_BYTE_ORDER == RTE_LITTLE_ENDIAN
	/* sport | dport << 16 to the bytes of sport, dport in network
	 * order (big-endian hosts have them so already) */
	p = rte_bswap32(p);
	p = p >> 16 | p << 16;
#endif
	memcpy(sport, &p, sizeof(p));
}

/* Rewrite the DSCP bits (ECN kept) in place. Headers in a further
 * segment (pathological chains) are left alone. */
static void
mark_packet(struct rte_mbuf *m, const struct pa_pkt_meta *meta, uint8_t tos)
{
	uint32_t sum;

	if (meta->flags & PA_PKT_F_IPV4) {
		struct rte_ipv4_hdr *ip;
		uint16_t old_w, new_w;
		uint8_t new_tos;

		if ((uint32_t)meta->l3_off + sizeof(*ip) > rte_pktmbuf_data_len(m))
			return;
		ip = rte_pktmbuf_mtod_offset(m, struct rte_ipv4_hdr *,
			meta->l3_off);
		new_tos = (uint8_t)(tos | (ip->type_of_service & 3));
		if (new_tos == ip->type_of_service)
			return;
		/* RFC 1624: HC' = ~(~HC + ~m + m') over the 16-bit word that
		 * holds version/IHL and TOS. */
		old_w = (uint16_t)(ip->version_ihl << 8 | ip->type_of_service);
		new_w = (uint16_t)(ip->version_ihl << 8 | new_tos);
		sum = (uint16_t)~rte_be_to_cpu_16(ip->hdr_checksum);
		sum += (uint16_t)~old_w;
		sum += new_w;
		sum = (sum & 0xffff) + (sum >> 16);
		sum = (sum & 0xffff) + (sum >> 16);
		ip->type_of_service = new_tos;
		ip->hdr_checksum = rte_cpu_to_be_16((uint16_t)~sum);
	} else {
		struct rte_ipv6_hdr *ip6;
		uint32_t v, tc;

		if ((uint32_t)meta->l3_off + sizeof(*ip6) > rte_pktmbuf_data_len(m))
			return;
		ip6 = rte_pktmbuf_mtod_offset(m, struct rte_ipv6_hdr *,
			meta->l3_off);
		v = rte_be_to_cpu_32(ip6->vtc_flow);
		tc = tos | ((v >> 20) & 3);
		ip6->vtc_flow = rte_cpu_to_be_32((v & 0xf00fffff) | tc << 20);
	}
}

/* Apply the verdict of slot @p res (0: default) to packet @p m. The
 * default's hits are counted in @p *defaults, a local of the caller's
 * (one add per burst, not a chain of increments of one counter). */
static __rte_always_inline uint8_t
act(const struct acl_table *t, unsigned int lidx, struct rte_mbuf *m,
		const struct pa_pkt_meta *meta, uint32_t res, uint64_t now,
		unsigned int *defaults)
{
	const struct acl_slot *s;
	struct acl_counter *c;

	if (res == 0) {
		(*defaults)++;
		return t->def == PA_ACL_DROP ? PA_ACL_V_DROP_ACL :
			PA_ACL_V_FORWARD;
	}
	s = &t->slots[res - 1];
	c = &t->store->hits[lidx][res - 1];
	c->packets++;
	c->bytes += rte_pktmbuf_pkt_len(m);
	switch (s->action) {
	case PA_ACL_PERMIT:
		return PA_ACL_V_FORWARD;
	case PA_ACL_DROP:
		return PA_ACL_V_DROP_ACL;
	case PA_ACL_MARK:
		mark_packet(m, meta, s->tos_mark);
		return PA_ACL_V_FORWARD;
	default:
		return rte_meter_srtcm_color_blind_check(
			&t->store->meters[lidx][res - 1],
			(struct rte_meter_srtcm_profile *)(uintptr_t)&s->profile,
			now, 1) == RTE_COLOR_GREEN ?
			PA_ACL_V_FORWARD : PA_ACL_V_DROP_POLICE;
	}
}

static __rte_always_inline uint8_t
in_port_of(const struct pa_acl *acl, uint16_t port_id)
{
	uint16_t idx;

	if (acl->port_index_of == NULL || port_id >= RTE_MAX_ETHPORTS)
		return ACL_PORT_ANY;
	idx = acl->port_index_of[port_id];
	return idx > UINT8_MAX ? ACL_PORT_ANY : (uint8_t)idx;
}

/* The better of two matches (slot + 1, 0 = none): higher priority, then
 * lower id. */
static __rte_always_inline uint32_t
better(const struct acl_table *t, uint32_t a, uint32_t b)
{
	const struct acl_slot *sa, *sb;

	if (b == 0)
		return a;
	if (a == 0)
		return b;
	sa = &t->slots[a - 1];
	sb = &t->slots[b - 1];
	if (sb->priority > sa->priority ||
	    (sb->priority == sa->priority && sb->id < sa->id))
		return b;
	return a;
}

/* Matches of deleted rules that the base still holds count as none. */
static __rte_always_inline void
void_dead(const struct acl_table *t, uint32_t *res, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		if (res[i] != 0 && t->slots[res[i] - 1].dead)
			res[i] = 0;
}

/* Look @p n keys up in every context of both tiers of one family; @p np:
 * the keys are of packets without ports. */
static __rte_always_inline void
lookup(const struct acl_table *t, const struct acl_set *sets, bool np,
		const uint8_t **data, uint32_t *res, unsigned int n)
{
	uint32_t more[ACL_MAX_BURST];
	unsigned int k, c, i, cnt;
	bool first = true;

	for (k = 0; k < ACL_TIERS; k++) {
		struct rte_acl_ctx *const *ctx = sets[k].ctx;

		cnt = sets[k].n;
		if (np && sets[k].n_np != 0) {
			ctx = sets[k].np;
			cnt = sets[k].n_np;
		}
		for (c = 0; c < cnt; c++) {
			if (first) {
				rte_acl_classify(ctx[c], data, res, n, 1);
				if (unlikely(t->n_dead != 0))
					void_dead(t, res, n);
				first = false;
				continue;
			}
			rte_acl_classify(ctx[c], data, more, n, 1);
			if (unlikely(t->n_dead != 0))
				void_dead(t, more, n);
			for (i = 0; i < n; i++)
				res[i] = better(t, res[i], more[i]);
		}
	}
	if (first)
		memset(res, 0, sizeof(*res) * n);
}

/* ------------------------------------------------------------------ */
/* The flow cache (acl_priv.h)                                         */
/* ------------------------------------------------------------------ */

/* Where a key goes: a class of lookup() (family, with or without
 * ports), or none (non-IP: its verdict is made). */
enum { FC_C4, FC_C4N, FC_C6, FC_C6N, FC_NONE };

/* Odd multipliers: the top bits of a word times one of them depend on
 * every bit of the word (Fibonacci hashing); a set is the top bits of
 * the words' products XORed. */
#define FC_M1	0x9e3779b97f4a7c15ULL
#define FC_M2	0xc2b2ae3d27d4eb4fULL
#define FC_M3	0x165667b19e3779f9ULL
#define FC_M4	0xd6e8feb86659fd93ULL
#define FC_M5	0xff51afd7ed558ccdULL

/* The key's head (proto, in_port, ports_known: bytes 0, 4 and 5 of both
 * layouts; the rest of the eight bytes is 0) in three bytes. */
static __rte_always_inline uint64_t
fc_head(const void *k)
{
	uint64_t w;

	memcpy(&w, k, sizeof(w));
	w = rte_le_to_cpu_64(w);
	return (w | w >> 24) & 0xffffff;
}

static __rte_always_inline void
fc4_words(const struct acl_key4 *k, uint64_t *k0, uint64_t *k1)
{
	uint32_t p;

	memcpy(k0, &k->src, sizeof(*k0));	/* src, dst */
	memcpy(&p, &k->sport, sizeof(p));	/* sport, dport */
	*k1 = p | fc_head(k) << 32 | ACL_FC4_LIVE;
}

static __rte_always_inline uint32_t
fc4_set(uint64_t k0, uint64_t k1, unsigned int shift)
{
	return (uint32_t)((k0 * FC_M1 ^ k1 * FC_M2) >> shift);
}

static __rte_always_inline void
fc6_words(const struct acl_key6 *k, uint64_t w[5])
{
	uint32_t p;

	memcpy(w, k->src, 32);			/* src, dst */
	memcpy(&p, &k->sport, sizeof(p));
	w[4] = p | fc_head(k) << 32;
}

static __rte_always_inline uint32_t
fc6_set(const uint64_t w[5], unsigned int shift)
{
	return (uint32_t)((w[0] * FC_M1 ^ w[1] * FC_M2 ^ w[2] * FC_M3 ^
		w[3] * FC_M4 ^ w[4] * FC_M5) >> shift);
}

/* The verdict a set holds for a key of epoch @p epoch, in @p *res. */
static __rte_always_inline bool
fc4_find(const struct acl_fc4_set *set, uint64_t k0, uint64_t k1,
		uint32_t epoch, uint32_t *res)
{
	const struct acl_fc4_way *w = set->way;
	bool h0 = ((w[0].k0 ^ k0) | (w[0].k1 ^ k1)) == 0;
	bool h1 = ((w[1].k0 ^ k0) | (w[1].k1 ^ k1)) == 0;
	bool h2 = ((w[2].k0 ^ k0) | (w[2].k1 ^ k1)) == 0;

	RTE_BUILD_BUG_ON(ACL_FC4_WAYS != 3);
	*res = h0 ? w[0].res : h1 ? w[1].res : w[2].res;
	return (h0 | h1 | h2) & (set->epoch == epoch);
}

/* Way @p i of @p set holds the key @p w (fc6_words()) and is filled. */
static __rte_always_inline bool
fc6_same(const struct acl_fc6_set *set, unsigned int i, const uint64_t w[5])
{
	const uint64_t *k = set->k[i];

	return ((k[0] ^ w[0]) | (k[1] ^ w[1]) | (k[2] ^ w[2]) |
		(k[3] ^ w[3]) | ((k[4] ^ (w[4] | ACL_FC6_LIVE)) &
		ACL_FC6_KEY_MASK)) == 0;
}

/* Way @p i's verdict. */
static __rte_always_inline uint32_t
fc6_res(const struct acl_fc6_set *set, unsigned int i)
{
	return (uint32_t)(set->k[i][4] >> ACL_FC6_RES_SHIFT) << 8 |
		set->res_lo[i];
}

static __rte_always_inline bool
fc6_find(const struct acl_fc6_set *set, const uint64_t w[5], uint32_t epoch,
		uint32_t *res)
{
	bool h0 = fc6_same(set, 0, w);
	bool h1 = fc6_same(set, 1, w);
	bool h2 = fc6_same(set, 2, w);

	RTE_BUILD_BUG_ON(ACL_FC6_WAYS != 3);
	*res = fc6_res(set, h0 ? 0 : h1 ? 1 : 2);
	return (h0 | h1 | h2) & (set->epoch == epoch);
}

/* A full set's way that a miss takes over: one miss in ACL_FC_EVICT
 * takes one, the ways in turn (the others leave the residents serving);
 * -1: none. */
static __rte_always_inline int
fc_evict(struct acl_fcache *fc, unsigned int ways)
{
	if (++fc->evict % ACL_FC_EVICT != 0)
		return -1;
	return (int)(fc->evict / ACL_FC_EVICT % ways);
}

/* A miss's verdict into its set (@p kw: its key's words, as
 * fc4_words() or fc6_words() made them): an empty way (a set of another
 * epoch is emptied first; ways fill in order), else fc_evict()'s.
 * Nothing when the key is there already (an earlier packet of the burst
 * put it). */
static __rte_always_inline void
fc4_fill(struct acl_fcache *fc, const uint64_t kw[2], uint32_t set_idx,
		uint32_t epoch, uint32_t res)
{
	struct acl_fc4_set *set = &fc->v4[set_idx];
	const uint64_t k0 = kw[0], k1 = kw[1];
	struct acl_fc4_way *w;
	unsigned int i;
	int way;

	if (set->epoch != epoch) {
		memset(set->way, 0, sizeof(set->way));
		set->epoch = epoch;
	}
	for (i = 0; i < ACL_FC4_WAYS; i++) {
		w = &set->way[i];
		if (w->k1 == 0)
			goto fill;
		if (w->k0 == k0 && w->k1 == k1)
			return;
	}
	way = fc_evict(fc, ACL_FC4_WAYS);
	if (way < 0)
		return;
	w = &set->way[way];
fill:
	w->k0 = k0;
	w->k1 = k1;
	w->res = res;
}

static __rte_always_inline void
fc6_fill(struct acl_fcache *fc, const uint64_t kw[5], uint32_t set_idx,
		uint32_t epoch, uint32_t res)
{
	struct acl_fc6_set *set = &fc->v6[set_idx];
	unsigned int i;
	int way;

	if (unlikely(res > ACL_FC6_RES_MAX))
		return;
	if (set->epoch != epoch) {
		for (i = 0; i < ACL_FC6_WAYS; i++)
			set->k[i][4] = 0;
		set->epoch = epoch;
	}
	for (i = 0; i < ACL_FC6_WAYS; i++) {
		if (!(set->k[i][4] & ACL_FC6_LIVE))
			goto fill;
		if (fc6_same(set, i, kw))
			return;
	}
	way = fc_evict(fc, ACL_FC6_WAYS);
	if (way < 0)
		return;
	i = (unsigned int)way;
fill:
	memcpy(set->k[i], kw, 4 * sizeof(kw[0]));
	set->k[i][4] = kw[4] | ACL_FC6_LIVE |
		(uint64_t)(res >> 8) << ACL_FC6_RES_SHIFT;
	set->res_lo[i] = (uint8_t)res;
}

/* Whether this burst uses the cache: not while it is paused (a poor hit
 * rate), which counts down by the burst. */
static __rte_always_inline bool
fc_use(struct acl_fcache *fc, uint16_t n)
{
	if (likely(fc->pause_left == 0))
		return true;
	fc->pause_left -= RTE_MIN(fc->pause_left, (uint32_t)n);
	return false;
}

/* Count a burst's @p lookups and @p hits; at the end of a window, pause
 * the cache when it served under 1/ACL_FC_POOR of them, twice as long as
 * last time when that window followed a pause too. */
static __rte_always_inline void
fc_account(struct acl_fcache *fc, struct pa_acl_lcore_extra *x,
		unsigned int lookups, unsigned int hits)
{
	x->fc_hits += hits;
	x->fc_misses += lookups - hits;
	fc->win_lookups += lookups;
	fc->win_hits += hits;
	if (unlikely(fc->win_lookups >= ACL_FC_WINDOW)) {
		if (fc->win_hits < fc->win_lookups / ACL_FC_POOR) {
			fc->pause_left = RTE_MAX(fc->pause_next,
				ACL_FC_PAUSE);
			fc->pause_next = RTE_MIN(fc->pause_left * 2,
				ACL_FC_PAUSE_MAX);
			x->fc_pauses++;
		} else {
			fc->pause_next = ACL_FC_PAUSE;
		}
		fc->win_lookups = 0;
		fc->win_hits = 0;
	}
}

uint16_t
pa_acl_classify(struct pa_acl *acl, unsigned int lidx, struct rte_mbuf **pkts,
		uint16_t n, uint8_t *verdicts)
{
	const struct acl_table *t = __atomic_load_n(&acl->live, __ATOMIC_ACQUIRE);
	struct acl_key4 k4[ACL_MAX_BURST];
	struct acl_key6 k6[ACL_MAX_BURST];
	const uint8_t *d4[ACL_MAX_BURST], *d6[ACL_MAX_BURST];
	const uint8_t *d4n[ACL_MAX_BURST], *d6n[ACL_MAX_BURST];
	uint32_t r4[ACL_MAX_BURST], r6[ACL_MAX_BURST];
	uint32_t r4n[ACL_MAX_BURST], r6n[ACL_MAX_BURST];
	uint16_t i4[ACL_MAX_BURST], i6[ACL_MAX_BURST];
	uint16_t i4n[ACL_MAX_BURST], i6n[ACL_MAX_BURST];
	/* the flow cache's: each key's class and set, the hits */
	struct acl_fcache *fc = NULL;
	uint32_t fset[ACL_MAX_BURST], rh[ACL_MAX_BURST];
	uint16_t ih[ACL_MAX_BURST];
	uint8_t cls[ACL_MAX_BURST];
	/* ... and its words (fc4_words(), fc6_words()), made once */
	uint64_t fw[ACL_MAX_BURST][5];
	unsigned int nh = 0;
	uint8_t buf[40];
	unsigned int i, n4 = 0, n6 = 0, n4n = 0, n6n = 0, stopped = 0;
	unsigned int defaults = 0, non_ip = 0;
	/* the metadata's offset in hand: the key's byte stores would make
	 * the compiler reload it packet by packet */
	const int off = pa_pkt_meta_offset;
	uint16_t last_port = UINT16_MAX;
	uint64_t in_head = key_in_head(ACL_PORT_ANY);
	uint64_t now = 0;
	/* the table's epoch in a register: the cache's stores may alias it */
	const uint32_t epoch = t->epoch;
	uint8_t v;

	n = RTE_MIN(n, (uint16_t)ACL_MAX_BURST);
	if (acl_table_ruleless(t)) {
		/* No rules: the default for IP, non_ip for the rest. */
		uint8_t def = t->def == PA_ACL_DROP ? PA_ACL_V_DROP_ACL :
			PA_ACL_V_FORWARD;
		uint8_t other = t->non_ip_drop ? PA_ACL_V_DROP_NON_IP :
			PA_ACL_V_FORWARD;

		if (def == other) {
			memset(verdicts, def, n);
			for (i = 0; i < n; i++)
				non_ip += !(RTE_MBUF_DYNFIELD(pkts[i], off,
					const struct pa_pkt_meta *)->flags &
					(PA_PKT_F_IPV4 | PA_PKT_F_IPV6));
		} else {
			for (i = 0; i < n; i++) {
				bool ip = (RTE_MBUF_DYNFIELD(pkts[i], off,
					const struct pa_pkt_meta *)->flags &
					(PA_PKT_F_IPV4 | PA_PKT_F_IPV6)) != 0;

				verdicts[i] = ip ? def : other;
				non_ip += !ip;
			}
		}
		acl->dp.extra[lidx].default_hits += n - non_ip;
		acl->dp.extra[lidx].non_ip += non_ip;
		return (uint16_t)((def != PA_ACL_V_FORWARD ? n - non_ip : 0) +
			(other != PA_ACL_V_FORWARD ? non_ip : 0));
	}
	if (acl->fc != NULL && fc_use(&acl->fc[lidx], n))
		fc = &acl->fc[lidx];
	for (i = 0; i < n; i++) {
		struct rte_mbuf *m = pkts[i];
		const struct pa_pkt_meta *meta = RTE_MBUF_DYNFIELD(m, off,
			const struct pa_pkt_meta *);
		bool ports = has_ports(meta);
		const uint8_t *l3;

		cls[i] = FC_NONE;

		/* a burst comes from one port, as a rule */
		if (unlikely(m->port != last_port)) {
			last_port = m->port;
			in_head = key_in_head(in_port_of(acl, last_port));
		}
		if (meta->flags & PA_PKT_F_IPV4) {
			struct acl_key4 *k = &k4[i];

			l3 = l3_bytes(m, meta, 20, buf);
			key_head(k, meta->l4_proto, in_head, ports);
			/* the two addresses, adjacent in both */
			memcpy((uint8_t *)k + offsetof(struct acl_key4, src),
				l3 + 12, 8);
			key_ports(&k->sport, meta);
			if (fc != NULL) {
				/* its set fetched while the burst's keys are
				 * made; looked at below */
				uint64_t *w = fw[i];

				fc4_words(k, &w[0], &w[1]);
				fset[i] = fc4_set(w[0], w[1], fc->shift);
				rte_prefetch0(&fc->v4[fset[i]]);
				cls[i] = ports ? FC_C4 : FC_C4N;
			} else if (likely(ports)) {
				d4[n4] = (const uint8_t *)k;
				i4[n4++] = (uint16_t)i;
			} else {
				d4n[n4n] = (const uint8_t *)k;
				i4n[n4n++] = (uint16_t)i;
			}
		} else if (meta->flags & PA_PKT_F_IPV6) {
			struct acl_key6 *k = &k6[i];

			l3 = l3_bytes(m, meta, 40, buf);
			key_head(k, meta->l4_proto, in_head, ports);
			memcpy((uint8_t *)k + offsetof(struct acl_key6, src),
				l3 + 8, 32);
			key_ports(&k->sport, meta);
			if (fc != NULL) {
				const struct acl_fc6_set *set;
				uint64_t *w = fw[i];

				fc6_words(k, w);
				fset[i] = fc6_set(w, fc->shift);
				set = &fc->v6[fset[i]];
				rte_prefetch0(set);
				rte_prefetch0((const uint8_t *)set +
					RTE_CACHE_LINE_SIZE);
				cls[i] = ports ? FC_C6 : FC_C6N;
			} else if (likely(ports)) {
				d6[n6] = (const uint8_t *)k;
				i6[n6++] = (uint16_t)i;
			} else {
				d6n[n6n] = (const uint8_t *)k;
				i6n[n6n++] = (uint16_t)i;
			}
		} else if (t->non_ip_drop) {
			non_ip++;
			verdicts[i] = PA_ACL_V_DROP_NON_IP;
			stopped++;
		} else {
			non_ip++;
			verdicts[i] = PA_ACL_V_FORWARD;
		}
	}
	if (fc != NULL) {
		/* The keys the cache knows take its verdict; the rest go to
		 * rte_acl, and their verdicts into the cache. */
		for (i = 0; i < n; i++) {
			uint32_t res;

			switch (cls[i]) {
			case FC_C4:
			case FC_C4N:
				if (fc4_find(&fc->v4[fset[i]],
						fw[i][0], fw[i][1], epoch, &res))
					break;
				if (cls[i] == FC_C4) {
					d4[n4] = (const uint8_t *)&k4[i];
					i4[n4++] = (uint16_t)i;
				} else {
					d4n[n4n] = (const uint8_t *)&k4[i];
					i4n[n4n++] = (uint16_t)i;
				}
				continue;
			case FC_C6:
			case FC_C6N:
				if (fc6_find(&fc->v6[fset[i]], fw[i],
						epoch, &res))
					break;
				if (cls[i] == FC_C6) {
					d6[n6] = (const uint8_t *)&k6[i];
					i6[n6++] = (uint16_t)i;
				} else {
					d6n[n6n] = (const uint8_t *)&k6[i];
					i6n[n6n++] = (uint16_t)i;
				}
				continue;
			default:
				continue;
			}
			ih[nh] = (uint16_t)i;
			rh[nh++] = res;
		}
	}
	if (n4 != 0)
		lookup(t, t->v4, false, d4, r4, n4);
	if (n4n != 0)
		lookup(t, t->v4, true, d4n, r4n, n4n);
	if (n6 != 0)
		lookup(t, t->v6, false, d6, r6, n6);
	if (n6n != 0)
		lookup(t, t->v6, true, d6n, r6n, n6n);
	if (fc != NULL) {
		for (i = 0; i < n4; i++)
			fc4_fill(fc, fw[i4[i]], fset[i4[i]], epoch, r4[i]);
		for (i = 0; i < n4n; i++)
			fc4_fill(fc, fw[i4n[i]], fset[i4n[i]], epoch, r4n[i]);
		for (i = 0; i < n6; i++)
			fc6_fill(fc, fw[i6[i]], fset[i6[i]], epoch, r6[i]);
		for (i = 0; i < n6n; i++)
			fc6_fill(fc, fw[i6n[i]], fset[i6n[i]], epoch, r6n[i]);
		fc_account(fc, &acl->dp.extra[lidx],
			nh + n4 + n4n + n6 + n6n, nh);
	}
	if (n4 + n6 + n4n + n6n + nh != 0)
		now = rte_rdtsc();
	for (i = 0; i < nh; i++) {
		v = act(t, lidx, pkts[ih[i]], pa_pkt_meta(pkts[ih[i]]),
			rh[i], now, &defaults);
		verdicts[ih[i]] = v;
		stopped += v != PA_ACL_V_FORWARD;
	}
	for (i = 0; i < n4; i++) {
		v = act(t, lidx, pkts[i4[i]], pa_pkt_meta(pkts[i4[i]]),
			r4[i], now, &defaults);
		verdicts[i4[i]] = v;
		stopped += v != PA_ACL_V_FORWARD;
	}
	for (i = 0; i < n4n; i++) {
		v = act(t, lidx, pkts[i4n[i]], pa_pkt_meta(pkts[i4n[i]]),
			r4n[i], now, &defaults);
		verdicts[i4n[i]] = v;
		stopped += v != PA_ACL_V_FORWARD;
	}
	for (i = 0; i < n6; i++) {
		v = act(t, lidx, pkts[i6[i]], pa_pkt_meta(pkts[i6[i]]),
			r6[i], now, &defaults);
		verdicts[i6[i]] = v;
		stopped += v != PA_ACL_V_FORWARD;
	}
	for (i = 0; i < n6n; i++) {
		v = act(t, lidx, pkts[i6n[i]], pa_pkt_meta(pkts[i6n[i]]),
			r6n[i], now, &defaults);
		verdicts[i6n[i]] = v;
		stopped += v != PA_ACL_V_FORWARD;
	}
	acl->dp.extra[lidx].default_hits += defaults;
	acl->dp.extra[lidx].non_ip += non_ip;
	return (uint16_t)stopped;
}

uint16_t
pa_acl_classify_ip(struct pa_acl *acl, unsigned int lidx,
		struct rte_mbuf **pkts, uint16_t n, uint8_t *verdicts)
{
	const struct acl_table *t = __atomic_load_n(&acl->live, __ATOMIC_ACQUIRE);
	uint8_t def;

	if (!acl_table_ruleless(t))
		return pa_acl_classify(acl, lidx, pkts, n, verdicts);
	n = RTE_MIN(n, (uint16_t)ACL_MAX_BURST);
	def = t->def == PA_ACL_DROP ? PA_ACL_V_DROP_ACL : PA_ACL_V_FORWARD;
	memset(verdicts, def, n);
	acl->dp.extra[lidx].default_hits += n;
	return def != PA_ACL_V_FORWARD ? n : 0;
}

static int
trace_locked(struct pa_acl *acl, const struct pa_flow_key *key,
		bool ports, int in_port, uint32_t *rule_id,
		enum pa_acl_action *action)
{
	const struct acl_table *t = acl->live;
	const uint8_t *data[1];
	uint32_t res = 0;
	struct acl_key4 k4;
	struct acl_key6 k6;

	memset(&k4, 0, sizeof(k4));
	memset(&k6, 0, sizeof(k6));
	if (key->family == 4) {
		k4.proto = key->proto;
		k4.in_port = in_port < 0 || in_port > UINT8_MAX - 1 ?
			ACL_PORT_ANY : (uint8_t)in_port;
		k4.ports_known = ports;
		k4.src = key->v4.src;
		k4.dst = key->v4.dst;
		k4.sport = key->sport;
		k4.dport = key->dport;
		data[0] = (const uint8_t *)&k4;
		lookup(t, t->v4, !ports, data, &res, 1);
	} else if (key->family == 6) {
		k6.proto = key->proto;
		k6.in_port = in_port < 0 || in_port > UINT8_MAX - 1 ?
			ACL_PORT_ANY : (uint8_t)in_port;
		k6.ports_known = ports;
		memcpy(k6.src, key->v6.src, 16);
		memcpy(k6.dst, key->v6.dst, 16);
		k6.sport = key->sport;
		k6.dport = key->dport;
		data[0] = (const uint8_t *)&k6;
		lookup(t, t->v6, !ports, data, &res, 1);
	} else {
		return -EINVAL;
	}
	if (res == 0) {
		*rule_id = 0;
		*action = t->def;
	} else {
		*rule_id = t->slots[res - 1].id;
		*action = (enum pa_acl_action)t->slots[res - 1].action;
	}
	return 0;
}

int
pa_acl_trace(struct pa_acl *acl, const struct pa_flow_key *key, bool ports,
		int in_port, uint32_t *rule_id, enum pa_acl_action *action)
{
	return ACL_LOCKED(acl, trace_locked(acl, key, ports, in_port, rule_id,
		action));
}
