/* SPDX-License-Identifier: GPL-2.0 */
#ifndef KQOS_MODEL_SNAPLAYOUT_H
#define KQOS_MODEL_SNAPLAYOUT_H

#include "sample.h"
#include "snapbuild.h"

/*
 * Which cgroup belongs to which pod and container (snapbuild's own, not an interface). It
 * changes only when the pod list, the walk or the file list does; at 1000 pods, finding it
 * again every tick by path was most of a build. Made again when any of them changes; the
 * cgroups of the maps are mapped to entities by id as they appear, once each.
 *
 * Entities: pod i is i; container k of all pods' containers, back to back, is npods + k.
 */

struct lay_owner {
	const char *path; /* "/kubepods/..." */
	long ent;
	size_t pod; /* the pod the path belongs to */
};

/* Where one pod or container is: borrowed from the inputs the layout was made from. */
struct lay_ent {
	char *cgroup; /* "/kubepods/...", NULL when not found */
	__u64 cgid;
	const struct cg_file_stat *file; /* its stat files, NULL when not read */
};

/* A cgroup the maps know, and the entity its time goes to (-1: none, an "other"). */
struct lay_id {
	__u64 cgid;
	long ent;
	size_t pod;
};

struct layout {
	bool valid;
	struct pod_list *pods; /* a reference, so the key's address is not reused while held */
	const struct cgwalk_result *walk;
	unsigned long walk_gen;
	const struct cg_file_stat *files;
	size_t nr_files;
	unsigned long files_gen;
	size_t npods, nctrs;
	struct lay_ent *ent; /* npods + nctrs */
	size_t *ctr_base; /* pod i's first container is entity npods + ctr_base[i] */
	struct snap_strings *paths; /* those ent[].cgroup points to where the layout made them */
	struct lay_owner *owners; /* sorted by path */
	size_t nowners;
	struct lay_id *ids, *miss; /* by cgid; this tick's new ids */
	size_t nids, nmiss, miss_cap, cursor;
	struct cg_acc *acc; /* one per entity, zeroed every tick */
	long *touched; /* the entities the last tick charged: only they need zeroing */
	size_t ntouched;
	/* one per entity, since first seen: carried to a remade layout by cgroup path */
	struct cg_cum *cum;
	/* the buckets of cum as last shared, and the entities whose buckets moved since */
	struct snap_hist_totals *totals;
	unsigned char *moved;
	size_t nmoved;
};

void layout_clear(struct layout *l);
/*
 * Make @l for @pods (may be NULL) and @in's walk and files unless it already is; an entity
 * whose cgroup the old layout knew keeps its counters. -ENOMEM keeps the old.
 */
int layout_update(struct layout *l, const struct snapbuild_input *in, struct pod_list *pods);
/* Zero the accumulators and rewind the id cursor: one tick's distribution begins. */
void layout_begin(struct layout *l);
/*
 * The entity of the map's cgroup @cgid at @path (-1: none), with its pod in *@pod. Calls of
 * one tick come in ascending @cgid order (in->cgs is sorted).
 */
long layout_owner(struct layout *l, __u64 cgid, const char *path, size_t *pod);
/* Entity @e's accumulator, to be charged this tick. */
struct cg_acc *layout_acc(struct layout *l, long e);
/* The tick's new ids join the table; an id the maps dropped leaves it. -ENOMEM keeps the old. */
int layout_end(struct layout *l, const struct cg_delta *cgs, size_t n);

#endif
