// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <string.h>
#include <time.h>

#include <bpf/libbpf.h>

#include "log.h"

static enum log_level cur_level = LOG_INFO;
static FILE *out_stream;

static const char *const level_names[] = { "error", "warn", "info", "debug" };

void log_set_level(enum log_level level)
{
	cur_level = level;
}

enum log_level log_get_level(void)
{
	return cur_level;
}

void log_set_stream(FILE *f)
{
	out_stream = f;
}

const char *log_level_name(enum log_level level)
{
	return level <= LOG_DEBUG ? level_names[level] : "unknown";
}

int log_level_parse(const char *s, enum log_level *ret)
{
	for (unsigned int i = 0; i <= LOG_DEBUG; i++) {
		if (!strcmp(s, level_names[i])) {
			*ret = i;
			return 0;
		}
	}
	return -EINVAL;
}

static void put_quoted(FILE *f, const char *s, size_t n)
{
	fputc('"', f);
	for (size_t i = 0; i < n && s[i]; i++) {
		if (s[i] == '"' || s[i] == '\\')
			fputc('\\', f);
		if (s[i] == '\n')
			fputs("\\n", f);
		else
			fputc(s[i], f);
	}
	fputc('"', f);
}

static void put_ts(FILE *f)
{
	struct timespec ts;
	struct tm tm;

	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	fprintf(f, "ts=%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ", tm.tm_year + 1900, tm.tm_mon + 1,
		tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, ts.tv_nsec / 1000000);
}

static void vlog(enum log_level level, const char *msg, size_t msg_len, const char *kv, va_list ap)
{
	FILE *f = out_stream ? out_stream : stderr;
	/* One buffered line per event, so concurrent writers (libbpf callbacks) never interleave. */
	char line[2048] = { 0 };
	FILE *m = fmemopen(line, sizeof(line) - 1, "w");

	if (!m)
		return;
	put_ts(m);
	fprintf(m, " level=%s msg=", log_level_name(level));
	put_quoted(m, msg, msg_len);
	if (kv && *kv) {
		fputc(' ', m);
		vfprintf(m, kv, ap);
	}
	fclose(m);
	/* fmemopen NUL-terminates and silently truncates a line that does not fit. */
	fprintf(f, "%s\n", line);
	fflush(f);
}

void log_msg(enum log_level level, const char *msg, const char *kv, ...)
{
	va_list ap;

	if (level > cur_level)
		return;
	va_start(ap, kv);
	vlog(level, msg, strlen(msg), kv, ap);
	va_end(ap);
}

static int libbpf_print(enum libbpf_print_level lvl, const char *fmt, va_list ap)
{
	enum log_level level = lvl == LIBBPF_WARN ? LOG_WARN :
			       lvl == LIBBPF_INFO ? LOG_INFO :
						    LOG_DEBUG;
	char buf[1024];
	size_t n;

	/* libbpf's info chatter (feature probes) is debug material for an agent. */
	if (level == LOG_INFO)
		level = LOG_DEBUG;
	if (level > cur_level)
		return 0;
	vsnprintf(buf, sizeof(buf), fmt, ap);
	n = strlen(buf);
	while (n && buf[n - 1] == '\n')
		n--;
	buf[n] = '\0';
	log_msg(level, buf, "src=libbpf");
	return 0;
}

void log_bridge_libbpf(void)
{
	libbpf_set_print(libbpf_print);
}
