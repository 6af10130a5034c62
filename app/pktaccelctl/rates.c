/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Counters into rates, and numbers for people: what `top` and the
 * stats_get summary share. A rate is a counter's delta over the measured
 * time between two readings; a counter that went back (the daemon
 * restarted, a rule was re-added) has no rate.
 */
#include <math.h>
#include <stdio.h>

#include "pktaccelctl.h"

double
ctl_num(const json_t *obj, const char *key)
{
	const json_t *v = json_object_get(obj, key);

	return json_is_number(v) ? json_number_value(v) : NAN;
}

double
ctl_rate(double cur, double prev, double dt_s)
{
	if (isnan(cur) || isnan(prev) || !(dt_s > 0) || cur < prev)
		return NAN;
	return (cur - prev) / dt_s;
}

const char *
ctl_fmt_si(char *buf, size_t len, double v)
{
	static const char sfx[] = { 'k', 'M', 'G', 'T', 'P', 'E' };
	int i = -1;

	if (isnan(v)) {
		snprintf(buf, len, "-");
		return buf;
	}
	if (v < 999.5) {
		snprintf(buf, len, "%.0f", v);
		return buf;
	}
	while (v >= 999.5 && i + 1 < (int)sizeof(sfx)) {
		v /= 1000.0;
		i++;
	}
	if (v < 9.995)
		snprintf(buf, len, "%.2f%c", v, sfx[i]);
	else if (v < 99.95)
		snprintf(buf, len, "%.1f%c", v, sfx[i]);
	else
		snprintf(buf, len, "%.0f%c", v, sfx[i]);
	return buf;
}

const char *
ctl_fmt_fixed(char *buf, size_t len, double v, double scale, int decimals)
{
	if (isnan(v))
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, "%.*f", decimals, v / scale);
	return buf;
}

const char *
ctl_fmt_pps(char *buf, size_t len, double pps)
{
	if (isnan(pps))
		snprintf(buf, len, "-");
	else if (pps < 999.5)
		snprintf(buf, len, "%.0f pps", pps);
	else if (pps < 999500.0)
		snprintf(buf, len, "%.3g kpps", pps / 1e3);
	else
		snprintf(buf, len, "%.3g Mpps", pps / 1e6);
	return buf;
}

const char *
ctl_fmt_ns(char *buf, size_t len, double ns)
{
	if (isnan(ns))
		snprintf(buf, len, "-");
	else if (ns < 999.5)
		snprintf(buf, len, "%.0fns", ns);
	else if (ns < 999500.0)
		snprintf(buf, len, "%.3gus", ns / 1e3);
	else if (ns < 999500000.0)
		snprintf(buf, len, "%.3gms", ns / 1e6);
	else
		snprintf(buf, len, "%.3gs", ns / 1e9);
	return buf;
}
