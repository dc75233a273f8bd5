// SPDX-License-Identifier: GPL-2.0
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <curses.h>

#include "top.h"

extern volatile sig_atomic_t top_stop;

#define MAX_KEYS 1024

struct line {
	struct top_row *row;
	struct top_row *parent; /* for containers */
	const char *tree;
};

struct view {
	struct top_conn *conn;
	struct top_model *m;
	double interval_s;
	enum top_col sort;
	bool desc;
	bool paused;
	bool help;
	bool editing;
	char filter[128];
	char sel[192]; /* key of the selected row: stays on it when rows move */
	char *collapsed[MAX_KEYS];
	int nr_collapsed;
	bool collapse_all;
	struct line *lines;
	size_t nr_lines, cap_lines;
	int top; /* first table line on screen */
	char msg[128];
};

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

/* --- collapse set ------------------------------------------------------------------------- */

static int collapsed_idx(const struct view *v, const char *key)
{
	for (int i = 0; i < v->nr_collapsed; i++)
		if (!strcmp(v->collapsed[i], key))
			return i;
	return -1;
}

static bool is_collapsed(const struct view *v, const struct top_row *r)
{
	bool in = collapsed_idx(v, r->key) >= 0;

	/* after `c` the set lists the expanded rows instead */
	return v->collapse_all ? !in : in;
}

static void toggle(struct view *v, const char *key)
{
	int i = collapsed_idx(v, key);

	if (i >= 0) {
		free(v->collapsed[i]);
		v->collapsed[i] = v->collapsed[--v->nr_collapsed];
	} else if (v->nr_collapsed < MAX_KEYS) {
		v->collapsed[v->nr_collapsed] = strdup(key);
		if (v->collapsed[v->nr_collapsed])
			v->nr_collapsed++;
	}
}

static void clear_collapsed(struct view *v, bool all)
{
	for (int i = 0; i < v->nr_collapsed; i++)
		free(v->collapsed[i]);
	v->nr_collapsed = 0;
	v->collapse_all = all;
}

/* --- lines -------------------------------------------------------------------------------- */

static void add_line(struct view *v, struct top_row *r, struct top_row *parent, const char *tree)
{
	if (v->nr_lines == v->cap_lines) {
		size_t cap = v->cap_lines ? v->cap_lines * 2 : 256;
		struct line *n = realloc(v->lines, cap * sizeof(*n));

		if (!n)
			return;
		v->lines = n;
		v->cap_lines = cap;
	}
	v->lines[v->nr_lines++] = (struct line){ .row = r, .parent = parent, .tree = tree };
}

static bool kid_matches(const struct view *v, const struct top_row *r)
{
	return !*v->filter || top_row__matches(r, v->filter);
}

static void build_lines(struct view *v)
{
	v->nr_lines = 0;
	if (!v->m)
		return;
	top_model__sort(v->m, v->sort, v->desc);
	for (size_t i = 0; i < v->m->nr_rows; i++) {
		struct top_row *r = &v->m->rows[i];
		bool own = kid_matches(v, r) &&
			   (!*v->filter || !r->nr_kids || strcasestr(r->name, v->filter));
		bool folded = is_collapsed(v, r);

		if (!top_row__matches(r, v->filter))
			continue;
		add_line(v, r, NULL, !r->nr_kids ? "  " : folded ? "+ " : "- ");
		if (folded)
			continue;
		for (size_t k = 0; k < r->nr_kids; k++) {
			if (!own && !kid_matches(v, &r->kids[k]))
				continue;
			add_line(v, &r->kids[k], r, k + 1 < r->nr_kids ? "  |- " : "  `- ");
		}
	}
}

static int sel_index(const struct view *v)
{
	for (size_t i = 0; i < v->nr_lines; i++)
		if (!strcmp(v->lines[i].row->key, v->sel))
			return (int)i;
	return v->nr_lines ? 0 : -1;
}

static void select_index(struct view *v, int i)
{
	if (!v->nr_lines)
		return;
	if (i < 0)
		i = 0;
	if (i >= (int)v->nr_lines)
		i = (int)v->nr_lines - 1;
	snprintf(v->sel, sizeof(v->sel), "%s", v->lines[i].row->key);
}

/* --- drawing ------------------------------------------------------------------------------ */

static const char *const help_text[] = {
	"kqos-top keys",
	"",
	"  < >  or , .   sort by the previous / next column",
	"  I             invert the sort order",
	"  /             filter rows (name, class, priority+QoS, resctrl group); Enter keeps, Esc clears",
	"  Enter         collapse or expand the selected pod",
	"  c  e          collapse all / expand all",
	"  Up Down j k   move the selection; PgUp PgDn Home End",
	"  p  space      pause (freeze the screen)",
	"  q             quit",
	"  ?             this help",
	"",
	"columns: CPU cores, RQ_P99 run-queue wait p99, THR% throttled periods,",
	"CPI cycles per instruction, LLC_MiB / MB/s of the pod's resctrl group;",
	"'-' means kqos does not have the metric on this host.",
	"",
	"press any key",
};

static void draw_help(void)
{
	int n = (int)(sizeof(help_text) / sizeof(help_text[0]));

	for (int i = 0; i < n && i + 2 < LINES; i++) {
		move(i + 1, 2);
		clrtoeol();
		mvaddnstr(i + 1, 4, help_text[i], COLS - 5);
	}
}

/* Offset of column @col in a formatted table line. */
static int col_offset(enum top_col col)
{
	int off = 0;

	for (int c = 0; c < (int)col; c++)
		off += top_col_width(c) + 1;
	/* numeric columns are right-aligned, titles too */
	if (col != COL_NAME && col != COL_CLASS && col != COL_PQ && col != COL_CPUSET &&
	    col != COL_RDT)
		off += top_col_width(col) - (int)strlen(top_col_name(col));
	return off;
}

static void draw_table(struct view *v, int y)
{
	char buf[512];
	int rows = LINES - y - 2, sel = sel_index(v);

	top_format_title(buf, sizeof(buf));
	attron(A_REVERSE);
	mvaddnstr(y, 0, buf, COLS);
	for (int x = (int)strlen(buf); x < COLS; x++)
		addch(' ');
	attroff(A_REVERSE);
	/* the sort column: bold and underlined in the title */
	attron(A_BOLD | A_UNDERLINE);
	if (col_offset(v->sort) < COLS)
		mvaddnstr(y, col_offset(v->sort), top_col_name(v->sort),
			  COLS - col_offset(v->sort));
	attroff(A_BOLD | A_UNDERLINE);
	if (sel >= 0 && sel < v->top)
		v->top = sel;
	if (sel >= v->top + rows)
		v->top = sel - rows + 1;
	if (v->top > (int)v->nr_lines - rows)
		v->top = (int)v->nr_lines - rows > 0 ? (int)v->nr_lines - rows : 0;
	for (int i = 0; i < rows && v->top + i < (int)v->nr_lines; i++) {
		const struct line *l = &v->lines[v->top + i];

		top_format_row(l->row, l->tree, buf, sizeof(buf));
		if (v->top + i == sel)
			attron(A_REVERSE);
		mvaddnstr(y + 1 + i, 0, buf, COLS);
		if (v->top + i == sel)
			attroff(A_REVERSE);
	}
}

static void draw(struct view *v)
{
	char lines[8][TOP_LINE];
	int n = 0, y;

	erase();
	if (v->m)
		n = top_header_lines(&v->m->hdr, lines, 8);
	else
		snprintf(lines[n++], TOP_LINE, "kqos-top: waiting for the first snapshot");
	for (y = 0; y < n; y++)
		mvaddnstr(y, 0, lines[y], COLS);
	mvprintw(y++, 0, "sort %s %s%s%s%s  %s", top_col_name(v->sort), v->desc ? "desc" : "asc",
		 *v->filter ? "  filter: " : "", v->filter, v->paused ? "  [PAUSED]" : "", v->msg);
	draw_table(v, y);
	if (v->editing)
		mvprintw(LINES - 1, 0, "filter: %s_", v->filter);
	else
		mvaddnstr(LINES - 1, 0, "? help  q quit  < > sort  I invert  / filter  p pause",
			  COLS);
	if (v->help)
		draw_help();
	refresh();
}

/* --- keys --------------------------------------------------------------------------------- */

static void key_filter(struct view *v, int ch)
{
	size_t len = strlen(v->filter);

	if (ch == '\n' || ch == '\r' || ch == KEY_ENTER) {
		v->editing = false;
	} else if (ch == 27) {
		v->filter[0] = '\0';
		v->editing = false;
	} else if (ch == KEY_BACKSPACE || ch == 127 || ch == 8) {
		if (len)
			v->filter[len - 1] = '\0';
	} else if (ch >= ' ' && ch < 127 && len + 1 < sizeof(v->filter)) {
		v->filter[len] = (char)ch;
		v->filter[len + 1] = '\0';
	}
}

static void key_enter(struct view *v)
{
	int i = sel_index(v);
	const struct line *l;

	if (i < 0)
		return;
	l = &v->lines[i];
	if (l->parent) {
		/* folding from a container selects its pod */
		snprintf(v->sel, sizeof(v->sel), "%s", l->parent->key);
		toggle(v, l->parent->key);
	} else if (l->row->nr_kids) {
		toggle(v, l->row->key);
	}
}

/* false: quit */
static bool key(struct view *v, int ch)
{
	int rows = LINES - 10 > 1 ? LINES - 10 : 1;

	v->msg[0] = '\0';
	if (v->help) {
		v->help = false;
		return true;
	}
	if (v->editing) {
		key_filter(v, ch);
		return true;
	}
	switch (ch) {
	case 'q':
	case 'Q':
		return false;
	case '<':
	case ',':
		v->sort = v->sort ? v->sort - 1 : NR_COLS - 1;
		break;
	case '>':
	case '.':
		v->sort = (v->sort + 1) % NR_COLS;
		break;
	case 'I':
		v->desc = !v->desc;
		break;
	case '/':
		v->editing = true;
		break;
	case 27:
		v->filter[0] = '\0';
		break;
	case 'p':
	case ' ':
		v->paused = !v->paused;
		break;
	case '?':
	case 'h':
		v->help = true;
		break;
	case '\n':
	case '\r':
	case KEY_ENTER:
		key_enter(v);
		break;
	case 'c':
		clear_collapsed(v, true);
		break;
	case 'e':
		clear_collapsed(v, false);
		break;
	case KEY_UP:
	case 'k':
		select_index(v, sel_index(v) - 1);
		break;
	case KEY_DOWN:
	case 'j':
		select_index(v, sel_index(v) + 1);
		break;
	case KEY_PPAGE:
		select_index(v, sel_index(v) - rows);
		break;
	case KEY_NPAGE:
		select_index(v, sel_index(v) + rows);
		break;
	case KEY_HOME:
		select_index(v, 0);
		break;
	case KEY_END:
		select_index(v, (int)v->nr_lines - 1);
		break;
	default:
		break;
	}
	return true;
}

/* --- loop --------------------------------------------------------------------------------- */

static int take_snapshot(struct view *v, char *line)
{
	struct top_model *m = NULL;
	int err = top_model__parse(line, &m);

	if (err) {
		/* an error object from the agent ("no snapshot yet"): keep the last view */
		snprintf(v->msg, sizeof(v->msg), "agent: %.100s", line);
		return 0;
	}
	top_model__free(v->m);
	v->m = m;
	return 0;
}

static int loop(struct view *v)
{
	long long next = 0;
	bool waiting = false;
	int err = 0;

	while (!top_stop) {
		struct pollfd p[2] = { { .fd = 0, .events = POLLIN },
				       { .fd = top_conn__fd(v->conn), .events = POLLIN } };
		long long t = now_ms();
		char *line = NULL;
		int ch;

		if (!v->paused && !waiting && t >= next) {
			err = top_conn__request(v->conn);
			if (err)
				break;
			waiting = true;
			next = t + (long long)(v->interval_s * 1000);
		}
		poll(p, 2, waiting || v->paused ? 1000 : (int)(next - t));
		if (p[1].revents) {
			err = top_conn__read(v->conn, &line);
			if (err < 0)
				break;
			if (err == 1) {
				waiting = false;
				/* a paused screen stays frozen even if an answer was in flight */
				if (!v->paused)
					take_snapshot(v, line);
				free(line);
				/* the lines pointed into the old model: rebuild before any key */
				build_lines(v);
			}
			err = 0;
		}
		while ((ch = getch()) != ERR)
			if (!key(v, ch))
				return 0;
		build_lines(v);
		if (sel_index(v) >= 0)
			select_index(v, sel_index(v));
		draw(v);
	}
	return err;
}

int top_view_run(struct top_conn *c, const struct top_view_opts *o)
{
	struct view v = { .conn = c, .interval_s = o->interval_s, .sort = COL_CPU, .desc = true };
	int err;

	if (o->filter)
		snprintf(v.filter, sizeof(v.filter), "%s", o->filter);
	setenv("ESCDELAY", "25", 0);
	if (!initscr())
		return EXIT_FAILURE;
	cbreak();
	noecho();
	nonl();
	intrflush(stdscr, FALSE);
	keypad(stdscr, TRUE);
	nodelay(stdscr, TRUE);
	curs_set(0);
	draw(&v);
	err = loop(&v);
	endwin();
	clear_collapsed(&v, false);
	free(v.lines);
	top_model__free(v.m);
	if (err) {
		fprintf(stderr, "kqos-top: lost the agent: %s\n", strerror(-err));
		return EXIT_FAILURE;
	}
	return EXIT_SUCCESS;
}
