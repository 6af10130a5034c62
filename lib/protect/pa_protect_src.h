/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * New flows per source prefix ("protect.src_new_flows"): token buckets
 * in a fixed amount of memory, one limiter per data-path lcore.
 *
 * Buckets. A source address is cut to its prefix (prefix4 / prefix6
 * bits) and hashed into one bucket of each of PA_PROTECT_SRC_ROWS rows of
 * @c cols buckets (a count-min sketch of token buckets). A bucket is a
 * GCRA virtual clock (the "theoretical arrival time" of the next token,
 * 8 bytes): equivalent to a token bucket of rate R and depth B, with no
 * division and one word per bucket. Memory is ROWS x cols x 8 bytes per
 * lcore whatever the number of sources: 512 KiB with the default cols.
 *
 * Collisions. Prefixes that share a bucket share its tokens. A new flow
 * is allowed when at least one of its prefix's buckets has a token, and
 * takes a token from each of them that has one; it is refused only when
 * all of them are empty. A prefix is therefore never limited below its
 * own rate; it is limited wrongly only when every one of its buckets is
 * shared with prefixes that emptied it (probability about f^ROWS when a
 * fraction f of the buckets is empty), and a heavy prefix whose buckets
 * are all shared gets at most the sum of their rates.
 *
 * Lcores. The flows of one source are spread over the lb lcores by the
 * flow hash (its source ports differ), so each lcore's limiter gets
 * rate / n and burst / n of the configured figures (n lb lcores,
 * fractions kept): the sum over the lcores is the configured limit,
 * with no shared state and no atomics. A source whose new flows all land
 * on one lcore gets 1/n of it there.
 *
 * Thread safety: a limiter belongs to one lcore; create and free on the
 * control side while no lcore uses it.
 */
#ifndef PA_PROTECT_SRC_H
#define PA_PROTECT_SRC_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <rte_common.h>
#include <rte_hash_crc.h>

#include "pa_config.h"

/** Rows of the sketch (buckets per prefix). */
#define PA_PROTECT_SRC_ROWS		2
/** Buckets per row by default (a power of two). */
#define PA_PROTECT_SRC_COLS		32768u

/** One lcore's limiter. */
struct pa_protect_src {
	uint64_t interval;		/**< TSC between two tokens */
	uint64_t tolerance;		/**< how far ahead of now a bucket's
					 * clock may run (the burst) */
	uint32_t mask;			/**< cols - 1 */
	uint32_t mask4;			/**< IPv4 prefix mask, memory order */
	uint8_t mask6[16];		/**< IPv6 prefix mask */
	uint64_t *tat;			/**< ROWS x cols bucket clocks, in the
					 * same allocation */
};

/**
 * A limiter for one of @p n_lcores lcores sharing @p cfg's limit.
 * @param cols buckets per row: a power of two (0: PA_PROTECT_SRC_COLS).
 * @param hz TSC frequency (the clock of pa_protect_src_take()'s now).
 * @param socket NUMA socket of the memory.
 * @return the limiter, or NULL with rte_errno set (EINVAL, ENOMEM).
 */
struct pa_protect_src *pa_protect_src_create(
		const struct pa_config_protect *cfg, unsigned int n_lcores,
		uint32_t cols, uint64_t hz, int socket);

/** Free a limiter; NULL is fine. */
void pa_protect_src_free(struct pa_protect_src *s);

/** Bytes a limiter of @p cols buckets per row takes (bounded memory). */
size_t pa_protect_src_bytes(uint32_t cols);

/* The bucket of row @p row of a prefix hash @p h. The rows must be
 * independent: not the CRC of @p h with another seed (CRC is linear, the
 * two indexes would differ by a constant and collide together), but
 * murmur3's finaliser, whose multiplications are not. */
static __rte_always_inline uint64_t *
pa_protect_src_bucket(const struct pa_protect_src *s, unsigned int row,
		uint32_t h)
{
	h ^= 0x9e3779b9u * (row + 1);
	h ^= h >> 16;
	h *= 0x85ebca6bu;
	h ^= h >> 13;
	h *= 0xc2b2ae35u;
	h ^= h >> 16;
	return &s->tat[(size_t)row * (s->mask + 1) + (h & s->mask)];
}

/**
 * May source @p src (4 or 16 bytes, network order, family @p family 4 or
 * 6) open a new flow at TSC @p now? Takes a token when it may.
 */
static __rte_always_inline bool
pa_protect_src_take(struct pa_protect_src *s, uint8_t family,
		const uint8_t *src, uint64_t now)
{
	uint64_t *b[PA_PROTECT_SRC_ROWS];
	unsigned int r, ok = 0;
	uint32_t h;

	if (family == 4) {
		uint32_t a;

		memcpy(&a, src, 4);
		h = rte_hash_crc_4byte(a & s->mask4, 4);
	} else {
		uint64_t x[2], m[2];

		memcpy(x, src, 16);
		memcpy(m, s->mask6, 16);
		h = rte_hash_crc_8byte(x[1] & m[1],
			rte_hash_crc_8byte(x[0] & m[0], 6));
	}
	for (r = 0; r < PA_PROTECT_SRC_ROWS; r++) {
		b[r] = pa_protect_src_bucket(s, r, h);
		/* a bucket whose clock is behind now is full */
		if (*b[r] <= now || *b[r] - now <= s->tolerance)
			ok |= 1u << r;
	}
	if (ok == 0)
		return false;
	for (r = 0; r < PA_PROTECT_SRC_ROWS; r++)
		if (ok & (1u << r))
			*b[r] = RTE_MAX(*b[r], now) + s->interval;
	return true;
}

#endif /* PA_PROTECT_SRC_H */
