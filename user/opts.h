/* SPDX-License-Identifier: GPL-2.0 */
#ifndef KQOS_USER_OPTS_H
#define KQOS_USER_OPTS_H

#include <stdbool.h>
#include <stddef.h>

#include "config.h"

enum out_format {
	OUT_TEXT = 0,
	OUT_JSON,
};

/* What kqosd was asked to do: the merged configuration plus run-mode flags. */
struct kqos_opts {
	struct kqos_config cfg;
	const char *config_path; /* NULL: compiled defaults only */
	bool once; /* one sample after one interval, printed, then exit */
	__u32 format; /* enum out_format, for --once */
	bool help;
	bool version;
	bool check_config; /* --check-config FILE: parse and validate it, run nothing */
	/* Command-line values, re-applied over the file on every (re)load. */
	struct {
		const char *cgroup_root, *interval, *log_level, *cgroup_mode;
		const char *socket, *textfile_dir, *resctrl_root, *state_dir, *pods_file;
		bool dry_run;
	} cli;
};

/*
 * Parse argv, then the config file if one was named, then apply the flags over it. Never exits
 * and never prints: returns -EINVAL (or -errno of the file) with a message in @err.
 */
int opts_parse(int argc, char **argv, struct kqos_opts *opts, char *err, size_t err_len);

/*
 * Build the configuration from the file named in @opts and the remembered flags, into @cfg
 * (used at start and on SIGHUP). @cfg is untouched on error.
 */
int opts_load_config(const struct kqos_opts *opts, struct kqos_config *cfg, char *err,
		     size_t err_len);

void opts_usage(FILE *f, const char *prog);

#endif
