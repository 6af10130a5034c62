/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef PA_LB_FTAB_H
#define PA_LB_FTAB_H

/*
 * The flow table of one lb lcore (issue 16): lb_flow_key -> position
 * (the index of the flow's line: its key and its struct lb_flow), keyed
 * with the packet's own flow hash (pa_pkt_meta.hash). Written and read by
 * its lcore only (the control thread reads it when the lcore has left
 * the data path).
 *
 * An index of 8-byte slots, (hash << 32 | position + 1), 0 empty, open
 * addressing with linear probing from hash & mask, deletions by backward
 * shift (no tombstones), at most 3/4 full (positions <= 3/4 of the
 * slots); the lines in an array by position, one 64-byte line a flow:
 * the key's 40 bytes (both families) and the 24-byte entry, so that a
 * hit reads two lines, the slot's and the flow's. The flows' hashes (for
 * deletes) are in an array of their own by position: a hit never reads
 * it. A position is stable while its flow lives. Positions come from a
 * stack: the table holds exactly the flows it was made for (n_pos - 1:
 * the last position is never used), then is full.
 *
 * Rather than rte_hash: a burst's lookups go in passes the caller drives
 * (lb_dp.c: prefetch the home slot as soon as the hash is known, then
 * read the slots and prefetch the flow's line, then compare), and a
 * hit costs a slot compare and a key compare, against ~146 instructions
 * a key for rte_hash's bulk lookup of a 48-byte key (measured with
 * perf/bench_lb_stage; perf/NOTES.md).
 *
 * The index grows and shrinks with the flows, so that a big table
 * holding few flows is read like a small one (at 10k flows, a 1M table's 16 MB index put
 * each flow's slot in a line of its own, out of L2: ~17 cycles a packet
 * more than a 32k-slot one; perf/NOTES.md). It starts at
 * LB_FTAB_MIN_SLOTS (or the whole index when smaller) and doubles when
 * half full, up to the size the table was made for (n_pos at most 3/4
 * of it, as before); it halves when fewer than 1/8 of its slots hold
 * flows, down to the start's size (a flood's flows gone, it is small
 * again). A resize is hitless and bounded: the new index takes every
 * add at once, and the lcore moves the flows already there from the old
 * one LB_FTAB_GROW_STEP positions at a time (lb_ftab_resize_step(), from
 * pa_lb_poll()); meanwhile a lookup that misses in the new index looks
 * in the old. Two buffers take turns, the whole size and half of it
 * (the sizes alternate between them, the whole one's last), allocated
 * and zeroed at creation; the one a resize leaves is zeroed again,
 * LB_FTAB_ZERO_STEP slots at a time, before the next may start.
 *
 * Bounded work whatever the traffic: the flow hash is the parser's,
 * unkeyed (two appliances must agree on it), so a client can craft many
 * flows of one hash, or of one home slot. An add is refused (the caller
 * counts flow_table_full and balances the flow statelessly, as when the
 * table is full) when its free slot would lie LB_FTAB_MAX_PROBE or more
 * slots past its home, or when LB_FTAB_MAX_TWINS flows of its hash are
 * there already. Backward-shift deletion only moves a flow towards its
 * home, so a lookup reads at most LB_FTAB_MAX_PROBE slots and compares
 * at most LB_FTAB_MAX_TWINS keys (rte_hash, for comparison: two buckets
 * of 8). With random hashes, at the worst load (3/4) about 1 add in
 * 10,000 probes that far; at 1/2 (the default 1M table) about none.
 *
 * Included by lb_priv.h, after struct lb_flow_key and struct lb_flow.
 */

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <rte_common.h>
#ifdef __AVX2__
#include <immintrin.h>
#endif
#include <rte_prefetch.h>

/** Slots a flow may lie past its home (a cluster's run read by a lookup:
 * 8 lines of slots). */
#define LB_FTAB_MAX_PROBE	64
/** Flows of one hash in the table (key compares a lookup may make). */
#define LB_FTAB_MAX_TWINS	8
/** Slots of the smallest index (lb_ftab_index_init()). */
#define LB_FTAB_MIN_SLOTS	4096
/** Positions a grow step moves to the new index. */
#define LB_FTAB_GROW_STEP	256
/** Slots of the spare buffer such a step zeroes after a grow (32 KB) */
#define LB_FTAB_ZERO_STEP	(LB_FTAB_GROW_STEP * 16)

/* A flow's line: its key (the first LB_FLOW_KEY_LEN bytes of its
 * lb_flow_key; family 0 when the position is free) and its entry. */
struct lb_ftab_line {
	uint8_t key[LB_FLOW_KEY_LEN];
	struct lb_flow f;
} __rte_aligned(64);

_Static_assert(sizeof(struct lb_ftab_line) == 64,
	"a flow's key and entry are one cache line");

struct lb_ftab {
	uint64_t *idx;			/* the index in use: mask + 1 slots */
	uint32_t mask;			/* its slots - 1 (a power of two) */
	uint32_t n_pos;			/* positions */
	uint32_t n_free;		/* positions on the free stack */
	uint32_t hw;			/* 1 + the highest position ever
					 * handed out: every flow lies below
					 * (the stack hands out low positions
					 * first and takes freed ones back on
					 * top), so the ageing sweep need not
					 * go further */
	uint32_t *free;			/* the stack */
	struct lb_ftab_line *line;	/* by position */
	uint32_t *sig;			/* by position: the flow's hash */
	/* the index's size (above) */
	uint64_t *old;			/* while resizing: the index left
					 * (omask + 1 slots); else NULL */
	uint32_t omask;
	uint32_t max_mask;		/* the whole index's slots - 1 */
	uint32_t min_mask;		/* the smallest's */
	uint32_t grow_below;		/* a grow is due when n_free is
					 * below this, */
	uint32_t shrink_above;		/* a shrink when above this
					 * (ftab_resize_mark()) */
	uint32_t mig;			/* while resizing: the next position
					 * to move */
	uint32_t dirty;			/* slots of the spare buffer (the
					 * one idx is not in) still to zero */
	uint32_t grows;			/* grows so far */
	uint32_t shrinks;		/* shrinks so far */
	uint64_t *buf[2];		/* max_mask + 1 slots, half of it */
};

/** Is the key of @p l @p k? (Whole words: padding is zero in every key.
 * With AVX2, its first 32 bytes in one compare (vptest) and the last 8
 * in a word; else five 8-byte loads a side straight from the line and
 * the key (arrays filled by memcpy() went through the stack). 15
 * instructions the scalar way, 7 with AVX2, callgrind on pass 2.) */
static __rte_always_inline bool
lb_ftab_key_eq(const struct lb_ftab_line *l, const struct lb_flow_key *k)
{
	const uint8_t *a = l->key, *b = (const uint8_t *)k;

	RTE_BUILD_BUG_ON(LB_FLOW_KEY_LEN != 40);
#ifdef __AVX2__
	{
		/* 16-byte halves: a ymm register here made gcc realign the
		 * stack, spill it and add vzeroupper on the way out */
		const __m128i d0 = _mm_xor_si128(
			_mm_loadu_si128((const __m128i *)(const void *)a),
			_mm_loadu_si128((const __m128i *)(const void *)b));
		const __m128i d1 = _mm_xor_si128(
			_mm_loadu_si128((const __m128i *)(const void *)(a + 16)),
			_mm_loadu_si128((const __m128i *)(const void *)(b + 16)));
		const __m128i d = _mm_or_si128(d0, d1);
		uint64_t x4, y4;

		memcpy(&x4, a + 32, 8);
		memcpy(&y4, b + 32, 8);
		return _mm_testz_si128(d, d) && x4 == y4;
	}
#else
	{
		uint64_t x0, x1, x2, x3, x4, y0, y1, y2, y3, y4;

		memcpy(&x0, a, 8);
		memcpy(&y0, b, 8);
		memcpy(&x1, a + 8, 8);
		memcpy(&y1, b + 8, 8);
		memcpy(&x2, a + 16, 8);
		memcpy(&y2, b + 16, 8);
		memcpy(&x3, a + 24, 8);
		memcpy(&y3, b + 24, 8);
		memcpy(&x4, a + 32, 8);
		memcpy(&y4, b + 32, 8);
		return ((x0 ^ y0) | (x1 ^ y1) | (x2 ^ y2) | (x3 ^ y3) |
			(x4 ^ y4)) == 0;
	}
#endif
}

/** The entry of the flow at @p pos. */
static __rte_always_inline struct lb_flow *
lb_ftab_flow(const struct lb_ftab *t, uint32_t pos)
{
	return &t->line[pos].f;
}

static __rte_always_inline uint64_t
lb_ftab_slot(uint32_t hash, uint32_t pos)
{
	return (uint64_t)hash << 32 | (pos + 1);
}

/** Prefetch the home slot of @p hash. */
static __rte_always_inline void
lb_ftab_prefetch(const struct lb_ftab *t, uint32_t hash)
{
	rte_prefetch0(&t->idx[hash & t->mask]);
}

static __rte_always_inline int32_t
ftab_candidate_in(const uint64_t *idx, uint32_t mask, uint32_t hash)
{
	uint32_t i = hash & mask, d;
	uint64_t v;

	for (d = 0; d < LB_FTAB_MAX_PROBE; d++, i = (i + 1) & mask) {
		v = idx[i];
		if (v == 0)
			return -ENOENT;
		if ((uint32_t)(v >> 32) == hash)
			return (int32_t)((uint32_t)v - 1);
	}
	return -ENOENT;
}

/** The position of the first slot of @p hash's probe sequence whose hash
 * is @p hash (a candidate: its key is still to compare), or -ENOENT when
 * none before an empty slot (a certain miss). While the index grows, a
 * miss in the new index looks in the old. */
static __rte_always_inline int32_t
lb_ftab_candidate(const struct lb_ftab *t, uint32_t hash)
{
	int32_t p = ftab_candidate_in(t->idx, t->mask, hash);

	if (unlikely(p < 0 && t->old != NULL))
		p = ftab_candidate_in(t->old, t->omask, hash);
	return p;
}

static __rte_always_inline int32_t
ftab_lookup_in(const struct lb_ftab *t, const uint64_t *idx, uint32_t mask,
		const struct lb_flow_key *k, uint32_t hash)
{
	uint32_t i = hash & mask, pos, d;
	uint64_t v;

	for (d = 0; d < LB_FTAB_MAX_PROBE; d++, i = (i + 1) & mask) {
		v = idx[i];
		if (v == 0)
			return -ENOENT;
		if ((uint32_t)(v >> 32) != hash)
			continue;
		pos = (uint32_t)v - 1;
		if (lb_ftab_key_eq(&t->line[pos], k))
			return (int32_t)pos;
	}
	return -ENOENT;
}

/** Position of @p k (hash @p hash), or -ENOENT. */
static __rte_always_inline int32_t
lb_ftab_lookup(const struct lb_ftab *t, const struct lb_flow_key *k,
		uint32_t hash)
{
	int32_t p = ftab_lookup_in(t, t->idx, t->mask, k, hash);

	if (unlikely(p < 0 && t->old != NULL))
		p = ftab_lookup_in(t, t->old, t->omask, k, hash);
	return p;
}

/* Flows of hash @p hash in @p idx (its probe sequence's run). */
static inline uint32_t
ftab_twins_in(const uint64_t *idx, uint32_t mask, uint32_t hash)
{
	uint32_t i = hash & mask, d, n = 0;
	uint64_t v;

	for (d = 0; d < LB_FTAB_MAX_PROBE && (v = idx[i]) != 0;
			d++, i = (i + 1) & mask)
		n += (uint32_t)(v >> 32) == hash;
	return n;
}

/** Add @p k (hash @p hash): its position (the existing one when it is
 * there), or -ENOSPC when the table is full, or when the flow would lie
 * too far from its home or have too many twins (see above). A new
 * flow's entry is the caller's to fill. */
static inline int32_t
lb_ftab_add(struct lb_ftab *t, const struct lb_flow_key *k, uint32_t hash)
{
	int32_t p = lb_ftab_lookup(t, k, hash);
	uint32_t i, pos, d, twins = 0;
	uint64_t v;

	if (p >= 0)
		return p;
	if (t->n_free == 0)
		return -ENOSPC;
	/* while resizing, the twins not moved yet are in the old index (the
	 * moved ones count twice: a crafted hash is refused early) */
	if (unlikely(t->old != NULL) &&
	    (twins = ftab_twins_in(t->old, t->omask, hash)) >=
	    LB_FTAB_MAX_TWINS)
		return -ENOSPC;
	for (i = hash & t->mask, d = 0; (v = t->idx[i]) != 0;
			i = (i + 1) & t->mask) {
		if (++d >= LB_FTAB_MAX_PROBE)
			return -ENOSPC;
		if ((uint32_t)(v >> 32) == hash &&
		    ++twins >= LB_FTAB_MAX_TWINS)
			return -ENOSPC;
	}
	pos = t->free[--t->n_free];
	if (pos >= t->hw)
		t->hw = pos + 1;
	memcpy(t->line[pos].key, k, LB_FLOW_KEY_LEN);
	t->sig[pos] = hash;
	t->idx[i] = lb_ftab_slot(hash, pos);
	return (int32_t)pos;
}

/* Remove slot value @p want from @p idx (backward shift: move up every
 * later slot of the cluster whose home is not in (i, j] cyclically).
 * @return 0, or -ENOENT when it is not there. */
static inline int
ftab_slot_del(uint64_t *idx, uint32_t mask, uint64_t want)
{
	uint32_t i, j, home, d;
	uint64_t v;

	i = (uint32_t)(want >> 32) & mask;
	for (d = 0;; d++, i = (i + 1) & mask) {
		if (d > mask)
			return -ENOENT;
		v = idx[i];
		if (v == 0)
			return -ENOENT;
		if (v == want)
			break;
	}
	for (j = i;;) {
		j = (j + 1) & mask;
		v = idx[j];
		if (v == 0)
			break;
		home = (uint32_t)(v >> 32) & mask;
		if (i <= j ? (home <= i || home > j) : (home <= i && home > j)) {
			idx[i] = v;
			i = j;
		}
	}
	idx[i] = 0;
	return 0;
}

/** Delete the flow at @p pos. @return 0, or -ENOENT when it is not
 * there. */
static inline int
lb_ftab_del(struct lb_ftab *t, uint32_t pos)
{
	uint64_t want;
	int a, b = -ENOENT;

	if (pos >= t->n_pos || t->line[pos].key[0] == 0)
		return -ENOENT;
	want = lb_ftab_slot(t->sig[pos], pos);
	/* while resizing, a flow moved is in both */
	a = ftab_slot_del(t->idx, t->mask, want);
	if (t->old != NULL)
		b = ftab_slot_del(t->old, t->omask, want);
	if (a != 0 && b != 0)
		return -ENOENT;
	t->line[pos].key[0] = 0;	/* family 0: no packet's */
	t->free[t->n_free++] = pos;
	return 0;
}

/* When @p t's index may resize next: a grow when n_free is below
 * grow_below (live flows half its slots; 0: never, the index is whole),
 * a shrink when above shrink_above (live flows under 1/8 of its slots;
 * UINT32_MAX: never, the index is the smallest). */
static inline void
ftab_resize_mark(struct lb_ftab *t)
{
	uint32_t half = (t->mask + 1) / 2, eighth = (t->mask + 1) / 8;
	uint32_t held = t->n_pos - 1;

	t->grow_below = t->mask < t->max_mask && held >= half ?
		held - half + 1 : 0;
	t->shrink_above = t->mask <= t->min_mask ? UINT32_MAX :
		held >= eighth ? held - eighth : 0;
}

/** Has @p t's index a resize due or under way (lb_ftab_resize_step())? */
static __rte_always_inline bool
lb_ftab_resize_due(const struct lb_ftab *t)
{
	return t->old != NULL || t->dirty != 0 ||
		t->n_free < t->grow_below || t->n_free > t->shrink_above;
}

/** Give @p t an index: @p big of @p slots slots (a power of two) and
 * @p half of @p slots / 2 (NULL when @p slots <= @p min_slots), both
 * zeroed; it starts at @p min_slots (a power of two) or @p slots when
 * smaller, in the buffer whose turn makes the whole one's the last. */
static inline void
lb_ftab_index_init(struct lb_ftab *t, uint64_t *big, uint64_t *half,
		uint32_t slots, uint32_t min_slots)
{
	uint32_t s = RTE_MIN(slots, min_slots), k = 0;

	while ((s << k) < slots)
		k++;
	t->buf[0] = big;
	t->buf[1] = half;
	t->max_mask = slots - 1;
	t->min_mask = s - 1;
	t->idx = t->buf[k & 1];
	t->mask = s - 1;
	t->old = NULL;
	t->omask = 0;
	t->mig = 0;
	t->dirty = 0;
	t->grows = 0;
	t->shrinks = 0;
	ftab_resize_mark(t);
}

/* Put slot value @p v in @p idx unless it is there: false when its place
 * would lie LB_FTAB_MAX_PROBE or more slots past its home. */
static inline bool
ftab_slot_put(uint64_t *idx, uint32_t mask, uint64_t v)
{
	uint32_t i = (uint32_t)(v >> 32) & mask, d;

	for (d = 0; d < LB_FTAB_MAX_PROBE; d++, i = (i + 1) & mask) {
		if (idx[i] == v)
			return true;
		if (idx[i] == 0) {
			idx[i] = v;
			return true;
		}
	}
	return false;
}

/** The index's housekeeping, bounded (a call per lcore loop pass while
 * lb_ftab_resize_due()): start a grow or a shrink when one is due, move
 * @p n positions of one (LB_FTAB_GROW_STEP), or zero @p n x 16 slots of
 * the spare buffer (LB_FTAB_ZERO_STEP for LB_FTAB_GROW_STEP). @return
 * -1, or the position of a flow the new index had no room for within
 * LB_FTAB_MAX_PROBE of its home (crafted hashes only): the caller deletes
 * it, and its next packet makes it anew, as after a refused add. */
static inline int32_t
lb_ftab_resize_step(struct lb_ftab *t, unsigned int n)
{
	unsigned int j;

	if (likely(t->old == NULL)) {
		if (t->dirty != 0) {
			uint64_t *spare = t->buf[t->idx == t->buf[0]];
			uint32_t k = RTE_MIN(t->dirty, n *
				(LB_FTAB_ZERO_STEP / LB_FTAB_GROW_STEP));

			t->dirty -= k;
			memset(spare + t->dirty, 0, (size_t)k * sizeof(*spare));
			return -1;
		}
		if (t->n_free < t->grow_below) {
			t->omask = t->mask;
			t->mask = t->mask * 2 + 1;
			t->grows++;
		} else if (t->n_free > t->shrink_above) {
			t->omask = t->mask;
			t->mask = t->mask / 2;
			t->shrinks++;
		} else {
			return -1;
		}
		/* start: the spare buffer is zero up to the new size */
		t->old = t->idx;
		t->idx = t->buf[t->idx == t->buf[0]];
		t->mig = 0;
		ftab_resize_mark(t);
	}
	for (j = 0; j < n && t->mig < t->hw; j++) {
		uint32_t p = t->mig++;

		if (t->line[p].key[0] != 0 &&
		    !ftab_slot_put(t->idx, t->mask, lb_ftab_slot(t->sig[p], p)))
			return (int32_t)p;
	}
	if (t->mig >= t->hw) {
		/* every flow is in the new index: the old is the spare */
		t->dirty = t->omask + 1;
		t->old = NULL;
	}
	return -1;
}

#endif /* PA_LB_FTAB_H */
