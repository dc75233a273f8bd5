// SPDX-License-Identifier: GPL-2.0
/* Schemata as data: parse, format, validate and the CBM/MB formulas, from and into buffers. */
/* schemata: pure parse/format/validate, the koordinator percent formulas, and the I/O wrappers. */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "resctrl.h"

/* Names of resources and events, as the kernel spells them. */
static const char *const res_names[RESCTRL_RES_MAX] = {
	[RESCTRL_RES_L3] = "L3", [RESCTRL_RES_L3CODE] = "L3CODE", [RESCTRL_RES_L3DATA] = "L3DATA",
	[RESCTRL_RES_L2] = "L2", [RESCTRL_RES_L2CODE] = "L2CODE", [RESCTRL_RES_L2DATA] = "L2DATA",
	[RESCTRL_RES_MB] = "MB", [RESCTRL_RES_SMBA] = "SMBA",
};

static const char *const ev_names[RESCTRL_EV_MAX] = {
	[RESCTRL_EV_LLC_OCCUPANCY] = "llc_occupancy",
	[RESCTRL_EV_MBM_TOTAL] = "mbm_total_bytes",
	[RESCTRL_EV_MBM_LOCAL] = "mbm_local_bytes",
};

const char *resctrl_res_name(enum resctrl_res res)
{
	return res < RESCTRL_RES_MAX ? res_names[res] : "?";
}

const char *resctrl_event_name(enum resctrl_event ev)
{
	return ev < RESCTRL_EV_MAX ? ev_names[ev] : "?";
}

int resctrl_res_from_name(const char *name, size_t len, enum resctrl_res *ret)
{
	int i;

	while (len && (*name == ' ' || *name == '\t')) {
		name++;
		len--;
	}
	while (len && (name[len - 1] == ' ' || name[len - 1] == '\t'))
		len--;
	for (i = 0; i < RESCTRL_RES_MAX; i++) {
		if (strlen(res_names[i]) == len && !strncmp(res_names[i], name, len)) {
			*ret = i;
			return 0;
		}
	}
	return -ENOENT;
}

static const char *skip_ws(const char *p, const char *end)
{
	while (p < end && isspace((unsigned char)*p))
		p++;
	return p;
}

static const char *trim_end(const char *p, const char *end)
{
	while (end > p && isspace((unsigned char)end[-1]))
		end--;
	return end;
}

/* Parse [p, end) as an unsigned number in base; whitespace around it is allowed. */
static int parse_num(const char *p, const char *end, int base, uint64_t *ret)
{
	char tmp[32], *e;
	size_t len;

	p = skip_ws(p, end);
	end = trim_end(p, end);
	len = end - p;
	if (!len || len >= sizeof(tmp))
		return -EINVAL;
	memcpy(tmp, p, len);
	tmp[len] = '\0';
	if (tmp[0] == '-' || tmp[0] == '+')
		return -EINVAL;
	errno = 0;
	*ret = strtoull(tmp, &e, base);
	return errno || *e ? -EINVAL : 0;
}

int resctrl_sline_get(const struct resctrl_sline *l, unsigned int id, uint64_t *ret)
{
	unsigned int i;

	for (i = 0; i < l->nr; i++) {
		if (l->ids[i] == id) {
			*ret = l->vals[i];
			return 0;
		}
	}
	return -ENOENT;
}

int resctrl_sline_set(struct resctrl_sline *l, unsigned int id, uint64_t val)
{
	unsigned int i;

	for (i = 0; i < l->nr; i++) {
		if (l->ids[i] == id) {
			l->vals[i] = val;
			return 0;
		}
	}
	if (l->nr >= RESCTRL_MAX_DOMAINS)
		return -E2BIG;
	l->ids[l->nr] = id;
	l->vals[l->nr++] = val;
	return 0;
}

static int parse_line(const char *p, const char *end, struct resctrl_schemata *s)
{
	const char *colon = memchr(p, ':', end - p), *tok, *semi, *eq;
	struct resctrl_sline *l;
	enum resctrl_res res;
	uint64_t id, val;
	int base;

	if (!colon)
		return -EINVAL;
	/* a resource this library does not know (a newer kernel's) is none of its business */
	if (resctrl_res_from_name(p, colon - p, &res))
		return 0;
	l = &s->res[res];
	if (l->nr)
		return -EINVAL;
	base = res == RESCTRL_RES_MB || res == RESCTRL_RES_SMBA ? 10 : 16;
	for (tok = colon + 1; tok < end; tok = semi + 1) {
		semi = memchr(tok, ';', end - tok);
		if (!semi)
			semi = end;
		if (skip_ws(tok, semi) == semi)
			continue;
		eq = memchr(tok, '=', semi - tok);
		/* "L3:uninitialized" of a pseudo-locksetup group lands here too */
		if (!eq || parse_num(tok, eq, 10, &id) || parse_num(eq + 1, semi, base, &val))
			return -EINVAL;
		if (!resctrl_sline_get(l, id, &val))
			return -EINVAL;
		if (resctrl_sline_set(l, id, val))
			return -E2BIG;
	}
	return l->nr ? 0 : -EINVAL;
}

int resctrl_schemata_parse(const char *buf, struct resctrl_schemata *ret)
{
	const char *p = buf, *nl, *end;
	int err;

	memset(ret, 0, sizeof(*ret));
	while (*p) {
		nl = strchr(p, '\n');
		end = nl ? nl : p + strlen(p);
		if (skip_ws(p, end) != end) {
			err = parse_line(p, end, ret);
			if (err)
				return err;
		}
		p = nl ? nl + 1 : end;
	}
	return 0;
}

static bool line_differs(const struct resctrl_sline *want, const struct resctrl_sline *cur)
{
	unsigned int i;
	uint64_t v;

	for (i = 0; i < want->nr; i++)
		if (resctrl_sline_get(cur, want->ids[i], &v) || v != want->vals[i])
			return true;
	return false;
}

int resctrl_schemata_format(const struct resctrl_schemata *want, const struct resctrl_schemata *cur,
			    char *buf, size_t len)
{
	size_t off = 0;
	unsigned int i;
	int r, n;

	if (!len)
		return -ENOSPC;
	buf[0] = '\0';
	for (r = 0; r < RESCTRL_RES_MAX; r++) {
		const struct resctrl_sline *l = &want->res[r];
		bool is_bw = r == RESCTRL_RES_MB || r == RESCTRL_RES_SMBA;

		if (!l->nr || (cur && !line_differs(l, &cur->res[r])))
			continue;
		n = snprintf(buf + off, len - off, "%s:", resctrl_res_name(r));
		if (n < 0 || (size_t)n >= len - off)
			return -ENOSPC;
		off += n;
		for (i = 0; i < l->nr; i++) {
			n = snprintf(buf + off, len - off,
				     is_bw ? "%s%u=%" PRIu64 : "%s%u=%" PRIx64, i ? ";" : "",
				     l->ids[i], l->vals[i]);
			if (n < 0 || (size_t)n >= len - off)
				return -ENOSPC;
			off += n;
		}
		/* the kernel rejects a buffer without a final newline (EINVAL, status untouched) */
		if (len - off < 2)
			return -ENOSPC;
		buf[off++] = '\n';
		buf[off] = '\0';
	}
	return off;
}

static void set_msg(char *msg, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void set_msg(char *msg, size_t len, const char *fmt, ...)
{
	va_list ap;

	if (!msg || !len)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, len, fmt, ap);
	va_end(ap);
}

/* Mirrors cbm_validate() in fs/resctrl/ctrlmondata.c, message for message. */
int resctrl_check_cbm(const struct resctrl_res_info *ri, uint64_t cbm, char *msg, size_t len)
{
	unsigned int first, zero, b;

	if ((ri->min_cbm_bits > 0 && !cbm) || cbm > ri->cbm_mask) {
		set_msg(msg, len, "Mask out of range");
		return -EINVAL;
	}
	for (first = 0; first < ri->cbm_len && !(cbm >> first & 1); first++)
		;
	for (zero = first; zero < ri->cbm_len && (cbm >> zero & 1); zero++)
		;
	for (b = zero; b < ri->cbm_len && !(cbm >> b & 1); b++)
		;
	if (!ri->is_sparse && b < ri->cbm_len) {
		set_msg(msg, len, "The mask %" PRIx64 " has non-consecutive 1-bits", cbm);
		return -EINVAL;
	}
	if (zero - first < ri->min_cbm_bits) {
		set_msg(msg, len, "Need at least %u bits in the mask", ri->min_cbm_bits);
		return -EINVAL;
	}
	return 0;
}

/* Mirrors bw_validate(): MBps takes any u32, otherwise [min_bw, max] rounded up to bw_gran. */
int resctrl_check_mb(const struct resctrl_res_info *ri, uint64_t bw, uint64_t *ret_val, char *msg,
		     size_t len)
{
	uint64_t gran = ri->bw_gran ? ri->bw_gran : 1;

	if (ri->mb_unit == RESCTRL_MB_MBPS) {
		if (bw > UINT32_MAX) {
			set_msg(msg, len, "Invalid MB value %" PRIu64, bw);
			return -EINVAL;
		}
	} else if (bw < ri->min_bw || bw > ri->max_bw) {
		set_msg(msg, len, "MB value %" PRIu64 " out of range [%u,%u]", bw, ri->min_bw,
			ri->max_bw);
		return -EINVAL;
	} else {
		bw = (bw + gran - 1) / gran * gran;
	}
	if (ret_val)
		*ret_val = bw;
	return 0;
}

static bool has_domain(const struct resctrl_caps *caps, unsigned int id)
{
	unsigned int i;

	for (i = 0; i < caps->nr_domains; i++)
		if (caps->domain_ids[i] == id)
			return true;
	return false;
}

int resctrl_schemata_validate(const struct resctrl_caps *caps, const struct resctrl_schemata *s,
			      char *msg, size_t len)
{
	unsigned int i;
	int r, err;

	for (r = 0; r < RESCTRL_RES_MAX; r++) {
		const struct resctrl_res_info *ri = &caps->res[r];
		const struct resctrl_sline *l = &s->res[r];

		if (!l->nr)
			continue;
		if (!ri->is_present) {
			set_msg(msg, len, "Unknown or unsupported resource name '%s'",
				resctrl_res_name(r));
			return -EINVAL;
		}
		for (i = 0; i < l->nr; i++) {
			/* the kernel fails these with EINVAL and no text */
			if (!has_domain(caps, l->ids[i])) {
				set_msg(msg, len, "%s", "");
				return -EINVAL;
			}
			err = ri->is_cache ? resctrl_check_cbm(ri, l->vals[i], msg, len) :
					     resctrl_check_mb(ri, l->vals[i], NULL, msg, len);
			if (err)
				return err;
		}
	}
	return 0;
}

int resctrl_cbm_from_pct(uint64_t cbm_mask, unsigned int start_pct, unsigned int end_pct,
			 uint64_t *ret_cbm)
{
	unsigned int ways, start, end;

	if (!cbm_mask || (cbm_mask & (cbm_mask + 1)) || start_pct >= end_pct || end_pct > 100)
		return -EINVAL;
	ways = 64 - __builtin_clzll(cbm_mask);
	start = (ways * start_pct + 99) / 100;
	end = (ways * end_pct + 99) / 100;
	if (start >= end)
		return -ERANGE;
	*ret_cbm = (end >= 64 ? ~0ULL : (1ULL << end) - 1) & ~((1ULL << start) - 1);
	return 0;
}

int resctrl_mb_from_pct(const struct resctrl_res_info *mb, unsigned int pct, uint64_t *ret_val)
{
	unsigned int gran = mb->bw_gran ? mb->bw_gran : 1, v;

	if (!pct || pct > 100)
		return -EINVAL;
	switch (mb->mb_unit) {
	case RESCTRL_MB_PERCENT:
		v = (pct + gran - 1) / gran * gran;
		if (v < mb->min_bw)
			v = mb->min_bw;
		*ret_val = v > 100 ? 100 : v;
		return 0;
	case RESCTRL_MB_AMD:
		/* koordinator: 160 = 25 GB/s * 8 * 0.8, measured on EPYC Milan */
		*ret_val = pct == 100 ? mb->max_bw : 160ULL * pct / 100;
		return 0;
	case RESCTRL_MB_MBPS:
		*ret_val = pct;
		return 0;
	default:
		return -EOPNOTSUPP;
	}
}

int resctrl_schemata_set_all(struct resctrl_schemata *s, const struct resctrl_caps *caps,
			     enum resctrl_res res, uint64_t val)
{
	unsigned int i;
	int err;

	if (res >= RESCTRL_RES_MAX)
		return -EINVAL;
	for (i = 0; i < caps->nr_domains; i++) {
		err = resctrl_sline_set(&s->res[res], caps->domain_ids[i], val);
		if (err)
			return err;
	}
	return 0;
}
