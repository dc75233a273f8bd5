/* SPDX-License-Identifier: GPL-2.0 */
#ifndef KQOS_BPF_CORE_FIXES_BPF_H
#define KQOS_BPF_CORE_FIXES_BPF_H

#include <bpf/bpf_core_read.h>

/*
 * kernfs_node::id became a plain u64 in kernel commit 67c0496e87d1 ("kernfs: convert
 * kernfs_node->id from union kernfs_node_id to u64", v5.5). Before, the id lived in
 * union kernfs_node_id { struct { u32 ino; u32 generation; }; u64 id; }.
 */
union kernfs_node_id___old {
	struct {
		u32 ino;
		u32 generation;
	};
	u64 id;
} __attribute__((preserve_access_index));

struct kernfs_node___old {
	union kernfs_node_id___old id;
} __attribute__((preserve_access_index));

static __always_inline __u64 kernfs_node_id(struct kernfs_node *kn)
{
	if (bpf_core_type_exists(union kernfs_node_id___old))
		return BPF_CORE_READ((struct kernfs_node___old *)kn, id.id);
	return kn->id;
}

/* The same for a pointer the verifier does not trust (read from an array with probe_read). */
static __always_inline __u64 kernfs_node_id_read(struct kernfs_node *kn)
{
	if (bpf_core_type_exists(union kernfs_node_id___old))
		return BPF_CORE_READ((struct kernfs_node___old *)kn, id.id);
	return BPF_CORE_READ(kn, id);
}

/*
 * task_struct::state was renamed __state in kernel commit 2f064a59a11f ("sched: Change
 * task_struct::state", v5.14).
 */
struct task_struct___o {
	volatile long int state;
} __attribute__((preserve_access_index));

struct task_struct___x {
	unsigned int __state;
} __attribute__((preserve_access_index));

static __always_inline __s64 get_task_state(void *task)
{
	struct task_struct___x *t = task;

	if (bpf_core_field_exists(t->__state))
		return BPF_CORE_READ(t, __state);
	return BPF_CORE_READ((struct task_struct___o *)task, state);
}

#endif
