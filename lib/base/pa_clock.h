/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef PA_CLOCK_H
#define PA_CLOCK_H

/**
 * @file
 * The control side's clock: CLOCK_MONOTONIC readings for timers, idle
 * timeouts and durations (never the data path, which reads the TSC).
 * Header only; any thread.
 */

#include <stdint.h>
#include <time.h>

/** Monotonic time in seconds (fractional), from an arbitrary origin. */
static inline double
pa_clock_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/** Monotonic time in nanoseconds, from an arbitrary origin. */
static inline uint64_t
pa_clock_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/** Monotonic time in microseconds, from an arbitrary origin. */
static inline uint64_t
pa_clock_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

/** Monotonic time in milliseconds, from an arbitrary origin. */
static inline int64_t
pa_clock_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

#endif /* PA_CLOCK_H */
