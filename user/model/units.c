// SPDX-License-Identifier: GPL-2.0
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "units.h"

/* Thresholds sit at 999.5 of a unit: 3 significant digits of 999.7us would print "1e+03us". */
void fmt_ns(char *buf, size_t len, double ns)
{
	if (ns < 999.5)
		snprintf(buf, len, "%.0fns", ns);
	else if (ns < 999.5e3)
		snprintf(buf, len, "%.3gus", ns / 1e3);
	else if (ns < 999.5e6)
		snprintf(buf, len, "%.3gms", ns / 1e6);
	else if (ns < 999.5e9)
		snprintf(buf, len, "%.3gs", ns / 1e9);
	else
		snprintf(buf, len, "%.0fs", ns / 1e9);
}

int parse_duration(const char *s, __u64 *ret_ns)
{
	static const struct {
		const char *suffix;
		double mult;
	} units[] = { { "ns", 1 },   { "us", 1e3 },   { "ms", 1e6 }, { "s", 1e9 },
		      { "m", 60e9 }, { "h", 3600e9 }, { "", 1e9 } };
	char *end;
	double v;

	if (!s || !*s || isspace((unsigned char)*s) || *s == '-' || *s == '+')
		return -EINVAL;
	errno = 0;
	v = strtod(s, &end);
	/* strtod also takes "nan" and "inf", which no duration is. */
	if (errno || end == s || !isfinite(v) || v < 0)
		return -EINVAL;
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (strcmp(end, units[i].suffix))
			continue;
		if (v * units[i].mult > 1.8e19)
			return -ERANGE;
		*ret_ns = (__u64)(v * units[i].mult + 0.5);
		return 0;
	}
	return -EINVAL;
}
