// SPDX-License-Identifier: GPL-2.0
/* The resctrl section of the plan: groups, their allocations in percent, member cgroups. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cgvalue.h"
#include "rdt_plan.h"

void plan_rdt_fini(struct plan_rdt *r)
{
	free(r->groups);
	free(r->members);
	memset(r, 0, sizeof(*r));
}

void plan_rdt_reset(struct plan_rdt *r)
{
	r->is_on = false;
	r->nr_groups = 0;
	r->nr_members = 0;
}

static int grow(void **v, size_t *cap, size_t need, size_t size)
{
	size_t n = *cap ? *cap : 16;
	void *p;

	if (need <= *cap)
		return 0;
	while (n < need)
		n *= 2;
	p = realloc(*v, n * size);
	if (!p)
		return -ENOMEM;
	*v = p;
	*cap = n;
	return 0;
}

int plan_rdt_copy(struct plan_rdt *dst, const struct plan_rdt *src)
{
	int err;

	err = grow((void **)&dst->groups, &dst->cap_groups, src->nr_groups, sizeof(*dst->groups));
	if (!err)
		err = grow((void **)&dst->members, &dst->cap_members, src->nr_members,
			   sizeof(*dst->members));
	if (err)
		return err;
	if (src->nr_groups)
		memcpy(dst->groups, src->groups, src->nr_groups * sizeof(*dst->groups));
	if (src->nr_members)
		memcpy(dst->members, src->members, src->nr_members * sizeof(*dst->members));
	dst->nr_groups = src->nr_groups;
	dst->nr_members = src->nr_members;
	dst->is_on = src->is_on;
	return 0;
}

/* The name becomes a directory under the resctrl root: nothing that could leave it. */
static bool name_ok(const char *s)
{
	size_t n = strlen(s);

	if (!n || n >= PLAN_RDT_NAME_MAX)
		return false;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		      (*s >= '0' && *s <= '9') || *s == '-' || *s == '_'))
			return false;
	return true;
}

const struct plan_rdt_group *plan_rdt_find(const struct plan_rdt *r, const char *name)
{
	for (size_t i = 0; i < r->nr_groups; i++)
		if (!strcmp(r->groups[i].name, name))
			return &r->groups[i];
	return NULL;
}

struct plan_rdt_group *plan_rdt_get(struct plan_rdt *r, const char *name)
{
	for (size_t i = 0; i < r->nr_groups; i++)
		if (!strcmp(r->groups[i].name, name))
			return &r->groups[i];
	return NULL;
}

int plan_rdt_add_group(struct plan_rdt *r, const struct plan_rdt_group *g, unsigned int *ret)
{
	int err;

	if (!name_ok(g->name))
		return -EINVAL;
	if (plan_rdt_find(r, g->name))
		return -EEXIST;
	err = grow((void **)&r->groups, &r->cap_groups, r->nr_groups + 1, sizeof(*r->groups));
	if (err)
		return err;
	r->groups[r->nr_groups] = *g;
	*ret = (unsigned int)r->nr_groups++;
	return 0;
}

int plan_rdt_add_member(struct plan_rdt *r, const char *cgroup, uint64_t cgid, unsigned int group)
{
	struct plan_rdt_member *m;
	int err;

	if (group >= r->nr_groups)
		return -EINVAL;
	if (cgroup && *cgroup &&
	    (cgroup[0] != '/' || strlen(cgroup) >= sizeof(m->cgroup) || !cgpath_is_safe(cgroup)))
		return -EINVAL;
	err = grow((void **)&r->members, &r->cap_members, r->nr_members + 1, sizeof(*r->members));
	if (err)
		return err;
	m = &r->members[r->nr_members++];
	memset(m, 0, sizeof(*m));
	if (cgroup)
		strcpy(m->cgroup, cgroup);
	m->cgid = cgid;
	m->group = group;
	return 0;
}

void plan_rdt_set_mon(struct plan_rdt *r, size_t from, const char *mon)
{
	if (!name_ok(mon))
		return;
	for (size_t i = from; i < r->nr_members; i++)
		strcpy(r->members[i].mon, mon);
}

int plan_rdt_group_of(const struct plan_rdt *r, uint64_t cgid)
{
	if (!cgid)
		return -1;
	for (size_t i = 0; i < r->nr_members; i++)
		if (r->members[i].cgid == cgid)
			return (int)r->members[i].group;
	return -1;
}
