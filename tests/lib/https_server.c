// SPDX-License-Identifier: GPL-2.0
/* asprintf, nftw flags */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "https_server.h"

struct https_server {
	char dir[64];
	char url[96];
	char base[64];
	char ca[128];
	bool tls;
	pid_t pid;
};

/* Written into the state directory and run with python3: no path to find at test time. */
static const char server_py[] =
	"import http.server, os, ssl, sys, threading, time\n"
	"d, tls, parent = sys.argv[1], sys.argv[2] == 'tls', int(sys.argv[3])\n"
	"lock = threading.Lock()\n"
	"def rd(name):\n"
	"    try:\n"
	"        with open(os.path.join(d, name), 'rb') as f:\n"
	"            return f.read()\n"
	"    except OSError:\n"
	"        return None\n"
	"def wr(name, data):\n"
	"    tmp = os.path.join(d, name + '.tmp')\n"
	"    with open(tmp, 'wb') as f:\n"
	"        f.write(data)\n"
	"    os.rename(tmp, os.path.join(d, name))\n"
	"class H(http.server.BaseHTTPRequestHandler):\n"
	"    protocol_version = 'HTTP/1.1'\n"
	"    def log_message(self, *a):\n"
	"        pass\n"
	"    def reply(self, code, body):\n"
	"        self.send_response(code)\n"
	"        self.send_header('Content-Type', 'application/json')\n"
	"        self.send_header('Content-Length', str(len(body)))\n"
	"        self.end_headers()\n"
	"        self.wfile.write(body)\n"
	"    def do_GET(self):\n"
	"        auth = self.headers.get('Authorization', '')\n"
	"        with lock:\n"
	"            wr('last_auth', auth.encode())\n"
	"            wr('last_get', self.path.encode())\n"
	"            n = int(rd('requests') or b'0') + 1\n"
	"            wr('requests', str(n).encode())\n"
	"        mode = (rd('mode') or b'ok').strip()\n"
	"        if mode == b'slow':\n"
	"            time.sleep(5)\n"
	"        want = rd('expect_token')\n"
	"        if want is not None and auth != 'Bearer ' + want.decode().strip():\n"
	"            return self.reply(401, b'{\"kind\":\"Status\",\"code\":401}')\n"
	"        route = rd('get' + self.path.replace('/', '_'))\n"
	"        if route is not None:\n"
	"            return self.reply(200, route)\n"
	"        if self.path.rstrip('/') != '/pods':\n"
	"            return self.reply(404, b'{}')\n"
	"        if mode == b'500':\n"
	"            return self.reply(500, b'internal error')\n"
	"        if mode == b'garbage':\n"
	"            return self.reply(200, b'{\"kind\":\"PodList\",\"items\":[<html>')\n"
	"        self.reply(200, rd('body') or b'')\n"
	"    def do_POST(self):\n"
	"        auth = self.headers.get('Authorization', '')\n"
	"        n = int(self.headers.get('Content-Length') or 0)\n"
	"        body = self.rfile.read(n) if n else b''\n"
	"        with lock:\n"
	"            wr('last_auth', auth.encode())\n"
	"            wr('last_post', ('POST ' + self.path + '\\n').encode() + body)\n"
	"            with open(os.path.join(d, 'posts'), 'ab') as f:\n"
	"                f.write(('POST ' + self.path + '\\n').encode())\n"
	"            n = int(rd('requests') or b'0') + 1\n"
	"            wr('requests', str(n).encode())\n"
	"        mode = (rd('post_mode') or b'ok').strip()\n"
	"        if mode == b'slow':\n"
	"            time.sleep(5)\n"
	"        want = rd('expect_token')\n"
	"        if want is not None and auth != 'Bearer ' + want.decode().strip():\n"
	"            return self.reply(401, b'{\"kind\":\"Status\",\"code\":401}')\n"
	"        if mode in (b'429', b'404', b'500'):\n"
	"            return self.reply(int(mode), b'{\"kind\":\"Status\",\"code\":' + mode + b'}')\n"
	"        if mode == b'garbage':\n"
	"            return self.reply(201, b'<html>')\n"
	"        self.reply(201, b'{\"kind\":\"Status\",\"status\":\"Success\"}')\n"
	"def watch():\n"
	"    while os.getppid() == parent:\n"
	"        time.sleep(0.2)\n"
	"    os._exit(0)\n"
	"srv = http.server.ThreadingHTTPServer(('127.0.0.1', 0), H)\n"
	"srv.daemon_threads = True\n"
	"if tls:\n"
	"    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)\n"
	"    ctx.load_cert_chain(os.path.join(d, 'cert.pem'), os.path.join(d, 'key.pem'))\n"
	"    srv.socket = ctx.wrap_socket(srv.socket, server_side=True)\n"
	"threading.Thread(target=watch, daemon=True).start()\n"
	"wr('port', str(srv.server_address[1]).encode())\n"
	"srv.serve_forever()\n";

static int run_quiet(char *const argv[])
{
	int status;
	pid_t pid = fork();

	if (pid < 0)
		return -errno;
	if (!pid) {
		int fd = open("/dev/null", O_WRONLY);

		if (fd >= 0) {
			dup2(fd, STDOUT_FILENO);
			dup2(fd, STDERR_FILENO);
		}
		execvp(argv[0], argv);
		_exit(127);
	}
	if (waitpid(pid, &status, 0) < 0)
		return -errno;
	return WIFEXITED(status) && !WEXITSTATUS(status) ? 0 : -EIO;
}

static int make_cert(struct https_server *srv)
{
	char key[128];
	char *const argv[] = {
		"openssl",
		"req",
		"-x509",
		"-newkey",
		"ec",
		"-pkeyopt",
		"ec_paramgen_curve:prime256v1",
		"-nodes",
		"-days",
		"1",
		"-subj",
		"/CN=127.0.0.1",
		"-addext",
		"subjectAltName=IP:127.0.0.1",
		"-keyout",
		key,
		"-out",
		srv->ca,
		NULL,
	};

	snprintf(key, sizeof(key), "%s/key.pem", srv->dir);
	snprintf(srv->ca, sizeof(srv->ca), "%s/cert.pem", srv->dir);
	return run_quiet(argv);
}

static char *path_of(struct https_server *srv, const char *name)
{
	char *p = NULL;

	if (strchr(name, '/'))
		return strdup(name);
	if (asprintf(&p, "%s/%s", srv->dir, name) < 0)
		return NULL;
	return p;
}

int https_server__write(struct https_server *srv, const char *name, const char *content)
{
	char *path = path_of(srv, name), *tmp = NULL;
	size_t len = strlen(content);
	int fd, err = 0;

	if (!path || asprintf(&tmp, "%s.tmp", path) < 0) {
		free(path);
		return -ENOMEM;
	}
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0 || write(fd, content, len) != (ssize_t)len)
		err = -EIO;
	if (fd >= 0)
		close(fd);
	if (!err && rename(tmp, path))
		err = -errno;
	free(tmp);
	free(path);
	return err;
}

char *https_server__read(struct https_server *srv, const char *name)
{
	char *path = path_of(srv, name), *buf = NULL;
	FILE *f = path ? fopen(path, "r") : NULL;
	long n;

	free(path);
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	buf = calloc(1, (size_t)(n > 0 ? n : 0) + 1);
	if (buf && n > 0 && fread(buf, 1, (size_t)n, f) != (size_t)n) {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	return buf;
}

int https_server__copy(struct https_server *srv, const char *name, const char *src_path)
{
	FILE *f = fopen(src_path, "r");
	char *buf;
	long n;
	int err;

	if (!f)
		return -errno;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	buf = calloc(1, (size_t)n + 1);
	if (!buf || fread(buf, 1, (size_t)n, f) != (size_t)n) {
		fclose(f);
		free(buf);
		return -EIO;
	}
	fclose(f);
	err = https_server__write(srv, name, buf);
	free(buf);
	return err;
}

int https_server__requests(struct https_server *srv)
{
	char *s = https_server__read(srv, "requests");
	int n = s ? atoi(s) : 0;

	free(s);
	return n;
}

static int wait_port(struct https_server *srv)
{
	for (int i = 0; i < 200; i++) {
		char *s = https_server__read(srv, "port");
		int port = s ? atoi(s) : 0;
		int status;

		free(s);
		if (port > 0) {
			snprintf(srv->base, sizeof(srv->base), "%s://127.0.0.1:%d",
				 srv->tls ? "https" : "http", port);
			snprintf(srv->url, sizeof(srv->url), "%s/pods", srv->base);
			return 0;
		}
		if (waitpid(srv->pid, &status, WNOHANG) == srv->pid) {
			srv->pid = 0;
			return -ECHILD;
		}
		nanosleep(&(struct timespec){ 0, 50 * 1000000L }, NULL);
	}
	return -ETIMEDOUT;
}

int https_server__start(bool tls, struct https_server **ret)
{
	struct https_server *srv = calloc(1, sizeof(*srv));
	char script[128], parent[16];
	int err;

	if (!srv)
		return -ENOMEM;
	srv->tls = tls;
	snprintf(srv->dir, sizeof(srv->dir), "/tmp/kqos-kubelet-XXXXXX");
	if (!mkdtemp(srv->dir)) {
		free(srv);
		return -errno;
	}
	snprintf(script, sizeof(script), "%s/server.py", srv->dir);
	snprintf(parent, sizeof(parent), "%d", (int)getpid());
	err = https_server__write(srv, script, server_py);
	if (!err && tls)
		err = make_cert(srv);
	if (err)
		goto err_free;
	srv->pid = fork();
	if (srv->pid < 0) {
		err = -errno;
		srv->pid = 0;
		goto err_free;
	}
	if (!srv->pid) {
		execlp("python3", "python3", script, srv->dir, tls ? "tls" : "plain", parent,
		       (char *)NULL);
		_exit(127);
	}
	err = wait_port(srv);
	if (err)
		goto err_free;
	*ret = srv;
	return 0;
err_free:
	https_server__free(srv);
	return err;
}

void https_server__stop(struct https_server *srv)
{
	if (!srv || srv->pid <= 0)
		return;
	kill(srv->pid, SIGKILL);
	waitpid(srv->pid, NULL, 0);
	srv->pid = 0;
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	remove(path);
	return 0;
}

void https_server__free(struct https_server *srv)
{
	if (!srv)
		return;
	https_server__stop(srv);
	if (srv->dir[0])
		nftw(srv->dir, rm_one, 8, FTW_DEPTH | FTW_PHYS);
	free(srv);
}

const char *https_server__url(const struct https_server *srv)
{
	return srv->url;
}

const char *https_server__base(const struct https_server *srv)
{
	return srv->base;
}

const char *https_server__ca(const struct https_server *srv)
{
	return srv->tls ? srv->ca : NULL;
}

const char *https_server__dir(const struct https_server *srv)
{
	return srv->dir;
}
