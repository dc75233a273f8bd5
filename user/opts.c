// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "opts.h"

enum {
	OPT_CGROUP_ROOT = 0x100,
	OPT_CGROUP_MODE,
	OPT_ONCE,
	OPT_FORMAT,
	OPT_SOCKET,
	OPT_TEXTFILE_DIR,
	OPT_RESCTRL_ROOT,
	OPT_STATE_DIR,
	OPT_PODS_FILE,
	OPT_CHECK_CONFIG,
};

static const struct option long_opts[] = {
	{ "config", required_argument, NULL, 'c' },
	{ "cgroup-root", required_argument, NULL, OPT_CGROUP_ROOT },
	{ "cgroup-mode", required_argument, NULL, OPT_CGROUP_MODE },
	{ "interval", required_argument, NULL, 'i' },
	{ "dry-run", no_argument, NULL, 'n' },
	{ "once", no_argument, NULL, OPT_ONCE },
	{ "format", required_argument, NULL, OPT_FORMAT },
	{ "log-level", required_argument, NULL, 'l' },
	{ "socket", required_argument, NULL, OPT_SOCKET },
	{ "textfile-dir", required_argument, NULL, OPT_TEXTFILE_DIR },
	{ "resctrl-root", required_argument, NULL, OPT_RESCTRL_ROOT },
	{ "state-dir", required_argument, NULL, OPT_STATE_DIR },
	{ "pods-file", required_argument, NULL, OPT_PODS_FILE },
	{ "check-config", required_argument, NULL, OPT_CHECK_CONFIG },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	{ NULL, 0, NULL, 0 },
};

void opts_usage(FILE *f, const char *prog)
{
	fprintf(f,
		"Usage: %s [OPTIONS]\n"
		"QoS agent for nodes that mix latency-sensitive and best-effort work.\n\n"
		"  -c, --config FILE          JSON configuration (default: built-in defaults)\n"
		"      --cgroup-root DIR      where the cgroup mounts live (default /sys/fs/cgroup)\n"
		"      --cgroup-mode MODE     auto|v1|v2: which hierarchy the collector keys on\n"
		"  -i, --interval DURATION    sampling interval, e.g. 1s, 250ms (default 1s)\n"
		"  -n, --dry-run              decide and log, never write cgroup or resctrl files\n"
		"      --once                 print one sample after one interval, then exit\n"
		"      --format text|json     output of --once (default text)\n"
		"  -l, --log-level LEVEL      error|warn|info|debug (default info)\n"
		"      --socket PATH          snapshot socket for kqos-top (default /run/kqos/kqos.sock,\n"
		"                             \"\" = off)\n"
		"      --textfile-dir DIR     write kqos.prom there for node_exporter\n"
		"      --resctrl-root DIR     resctrl mount (default /sys/fs/resctrl)\n"
		"      --state-dir DIR        journal of original cgroup values (default /var/lib/kqos)\n"
		"      --pods-file FILE       pod source: a PodList JSON file (kubelet's format)\n"
		"      --check-config FILE    validate FILE (and the flags) as kqosd would, then exit:\n"
		"                             0 when it loads, else 1 with file:line:column errors\n"
		"  -h, --help                 this text\n"
		"  -V, --version              print the version\n\n"
		"Signals: SIGINT/SIGTERM stop cleanly, SIGHUP reloads the configuration.\n",
		prog);
}

static int set_path(char *dst, size_t size, const char *v, const char *flag, bool may_be_empty,
		    char *err, size_t n)
{
	if ((!may_be_empty && !*v) || strlen(v) >= size) {
		snprintf(err, n, "%s: path %s", flag, *v ? "too long" : "empty");
		return -EINVAL;
	}
	snprintf(dst, size, "%s", v);
	return 0;
}

static int apply_cli_paths(const struct kqos_opts *o, struct kqos_config *cfg, char *err, size_t n)
{
	int ret = 0;

	if (o->cli.socket)
		ret = set_path(cfg->export.socket, sizeof(cfg->export.socket), o->cli.socket,
			       "--socket", true, err, n);
	if (!ret && o->cli.textfile_dir)
		ret = set_path(cfg->export.textfile_dir, sizeof(cfg->export.textfile_dir),
			       o->cli.textfile_dir, "--textfile-dir", false, err, n);
	if (!ret && o->cli.resctrl_root)
		ret = set_path(cfg->resctrl.root, sizeof(cfg->resctrl.root), o->cli.resctrl_root,
			       "--resctrl-root", false, err, n);
	if (!ret && o->cli.state_dir)
		ret = set_path(cfg->state_dir, sizeof(cfg->state_dir), o->cli.state_dir,
			       "--state-dir", false, err, n);
	if (!ret && o->cli.pods_file) {
		ret = set_path(cfg->pods.file.path, sizeof(cfg->pods.file.path), o->cli.pods_file,
			       "--pods-file", false, err, n);
		cfg->pods.source = POD_SOURCE_FILE;
	}
	return ret;
}

/* Overlay the remembered command-line values on @cfg, validating them like the file's. */
static int apply_cli(const struct kqos_opts *o, struct kqos_config *cfg, char *err, size_t n)
{
	enum log_level lvl;
	__u64 ns;

	if (o->cli.cgroup_root) {
		if (!*o->cli.cgroup_root ||
		    strlen(o->cli.cgroup_root) >= sizeof(cfg->cgroup_root)) {
			snprintf(err, n, "--cgroup-root: path empty or too long");
			return -EINVAL;
		}
		snprintf(cfg->cgroup_root, sizeof(cfg->cgroup_root), "%s", o->cli.cgroup_root);
	}
	if (o->cli.interval) {
		if (parse_duration(o->cli.interval, &ns) || ns < 1000000) {
			snprintf(err, n,
				 "--interval: '%s' is not a duration >= 1ms (e.g. 1s, 250ms)",
				 o->cli.interval);
			return -EINVAL;
		}
		cfg->interval_ns = ns;
	}
	if (o->cli.log_level) {
		if (log_level_parse(o->cli.log_level, &lvl)) {
			snprintf(err, n, "--log-level: '%s' is not error|warn|info|debug",
				 o->cli.log_level);
			return -EINVAL;
		}
		cfg->log_level = lvl;
	}
	if (o->cli.cgroup_mode) {
		static const char *const modes[] = { "auto", "v1", "v2" };
		int i;

		for (i = 0; i < 3 && strcmp(modes[i], o->cli.cgroup_mode); i++)
			;
		if (i == 3) {
			snprintf(err, n, "--cgroup-mode: '%s' is not auto|v1|v2",
				 o->cli.cgroup_mode);
			return -EINVAL;
		}
		cfg->cgroup_mode = i;
	}
	if (o->cli.dry_run)
		cfg->dry_run = true;
	return apply_cli_paths(o, cfg, err, n);
}

int opts_load_config(const struct kqos_opts *opts, struct kqos_config *cfg, char *err,
		     size_t err_len)
{
	struct kqos_config tmp;
	int ret;

	config_defaults(&tmp);
	if (opts->config_path) {
		ret = config_load_file(opts->config_path, &tmp, err, err_len);
		if (ret)
			return ret;
	}
	ret = apply_cli(opts, &tmp, err, err_len);
	if (!ret)
		*cfg = tmp;
	return ret;
}

static int parse_format(const char *s, __u32 *ret)
{
	if (!strcmp(s, "text"))
		*ret = OUT_TEXT;
	else if (!strcmp(s, "json"))
		*ret = OUT_JSON;
	else
		return -EINVAL;
	return 0;
}

static int parse_one(int c, struct kqos_opts *o, char *err, size_t n)
{
	switch (c) {
	case 'c':
		o->config_path = optarg;
		return 0;
	case OPT_CGROUP_ROOT:
		o->cli.cgroup_root = optarg;
		return 0;
	case OPT_CGROUP_MODE:
		o->cli.cgroup_mode = optarg;
		return 0;
	case 'i':
		o->cli.interval = optarg;
		return 0;
	case 'n':
		o->cli.dry_run = true;
		return 0;
	case OPT_ONCE:
		o->once = true;
		return 0;
	case OPT_FORMAT:
		if (!parse_format(optarg, &o->format))
			return 0;
		snprintf(err, n, "--format: '%s' is not text|json", optarg);
		return -EINVAL;
	case 'l':
		o->cli.log_level = optarg;
		return 0;
	case OPT_SOCKET:
		o->cli.socket = optarg;
		return 0;
	case OPT_TEXTFILE_DIR:
		o->cli.textfile_dir = optarg;
		return 0;
	case OPT_RESCTRL_ROOT:
		o->cli.resctrl_root = optarg;
		return 0;
	case OPT_STATE_DIR:
		o->cli.state_dir = optarg;
		return 0;
	case OPT_PODS_FILE:
		o->cli.pods_file = optarg;
		return 0;
	case OPT_CHECK_CONFIG:
		/* the same parser and checks as a start or a SIGHUP reload */
		o->config_path = optarg;
		o->check_config = true;
		return 0;
	case 'h':
		o->help = true;
		return 0;
	case 'V':
		o->version = true;
		return 0;
	default:
		snprintf(err, n, "unknown or incomplete option (see --help)");
		return -EINVAL;
	}
}

int opts_parse(int argc, char **argv, struct kqos_opts *opts, char *err, size_t err_len)
{
	int c, ret;

	memset(opts, 0, sizeof(*opts));
	optind = 0; /* glibc: full re-initialisation, so tests can call this repeatedly */
	opterr = 0;
	while ((c = getopt_long(argc, argv, "c:i:nl:hV", long_opts, NULL)) != -1) {
		ret = parse_one(c, opts, err, err_len);
		if (ret)
			return ret;
	}
	if (optind < argc) {
		snprintf(err, err_len, "unexpected argument '%s' (see --help)", argv[optind]);
		return -EINVAL;
	}
	if (opts->help || opts->version)
		return 0;
	return opts_load_config(opts, &opts->cfg, err, err_len);
}
