// SPDX-License-Identifier: GPL-2.0
#include <stdio.h>

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
