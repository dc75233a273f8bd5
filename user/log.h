/* SPDX-License-Identifier: GPL-2.0 */
#ifndef KQOS_USER_LOG_H
#define KQOS_USER_LOG_H

#include <stdarg.h>
#include <stdio.h>

/*
 * One line per event on stderr, logfmt style:
 *   ts=2026-11-29T21:40:00.123Z level=info msg="cgroup vanished" path=/kubepods/pod1 err=-2
 * `msg` is quoted and escaped by the logger; `kv` is a printf format for the key=value tail
 * (may be NULL). Values that may contain spaces must be quoted by the caller with %s inside "".
 */
enum log_level {
	LOG_ERROR = 0,
	LOG_WARN = 1,
	LOG_INFO = 2,
	LOG_DEBUG = 3,
};

void log_set_level(enum log_level level);
enum log_level log_get_level(void);
/* Redirect output (tests capture it); NULL restores stderr. */
void log_set_stream(FILE *f);
/* "error|warn|info|debug" -> level; -EINVAL for anything else. */
int log_level_parse(const char *s, enum log_level *ret);
const char *log_level_name(enum log_level level);
/* Route libbpf's messages through this logger: its debug output shows only at debug level. */
void log_bridge_libbpf(void);

void log_msg(enum log_level level, const char *msg, const char *kv, ...)
	__attribute__((format(printf, 3, 4)));

#define log_err(msg, ...)  log_msg(LOG_ERROR, msg, __VA_ARGS__)
#define log_warn(msg, ...) log_msg(LOG_WARN, msg, __VA_ARGS__)
#define log_info(msg, ...) log_msg(LOG_INFO, msg, __VA_ARGS__)
#define log_dbg(msg, ...)  log_msg(LOG_DEBUG, msg, __VA_ARGS__)

#endif
