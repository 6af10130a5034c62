/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef PA_ERR_H
#define PA_ERR_H

/**
 * @file
 * Reasons for failures: control-plane functions return 0 or -errno and
 * write a one-line reason into a caller's buffer ("err", "why"). Header
 * only; any thread.
 */

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

/** Write a reason into @p buf (nothing when @p buf is NULL or @p len 0). */
static inline void __attribute__((format(printf, 3, 0)))
pa_vseterr(char *buf, size_t len, const char *fmt, va_list ap)
{
	if (buf != NULL && len > 0)
		vsnprintf(buf, len, fmt, ap);
}

/** pa_vseterr() with the arguments inline. */
static inline void __attribute__((format(printf, 3, 4)))
pa_seterr(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	pa_vseterr(buf, len, fmt, ap);
	va_end(ap);
}

#endif /* PA_ERR_H */
