// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <string.h>

#include "cgvalue.h"

bool cgpath_is_safe(const char *rel)
{
	const char *p, *c;
	size_t len;

	if (!rel)
		return false;
	len = strlen(rel);
	if (len >= PATH_MAX)
		return false;
	p = rel[0] == '/' ? rel + 1 : rel;
	while (*p) {
		c = strchr(p, '/');
		len = c ? (size_t)(c - p) : strlen(p);
		if (len == 0)
			return false;
		if ((len == 1 && p[0] == '.') || (len == 2 && p[0] == '.' && p[1] == '.'))
			return false;
		for (size_t i = 0; i < len; i++)
			if ((unsigned char)p[i] < 0x20 || p[i] == 0x7f)
				return false;
		if (!c)
			break;
		p = c + 1;
	}
	return true;
}

uint64_t cg_shares_to_weight(uint64_t shares, enum cg_weight_formula formula)
{
	double l;

	if (shares == 0)
		return 0; /* unset, as runc and crun treat it */
	if (shares <= 2)
		return 1;
	if (shares >= 262144)
		return 10000;
	if (formula == CG_WEIGHT_LINEAR)
		return 1 + ((shares - 2) * 9999) / 262142;
	l = log2((double)shares);
	return (uint64_t)ceil(pow(10.0, (l * l + 125 * l) / 612.0 - 7.0 / 34.0));
}

int cg_weight_formula_parse(const char *s, enum cg_weight_formula *ret)
{
	if (!s)
		return -EINVAL;
	if (strcmp(s, "linear") == 0)
		*ret = CG_WEIGHT_LINEAR;
	else if (strcmp(s, "log") == 0)
		*ret = CG_WEIGHT_LOG;
	else
		return -EINVAL;
	return 0;
}
