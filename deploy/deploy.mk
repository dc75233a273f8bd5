# SPDX-License-Identifier: GPL-2.0
# Deployment targets (docs/deploy.md): the container image and its live test, manifest and rule
# checks, the systemd unit, install. Included by the top-level Makefile.

ENGINE ?= podman
IMAGE ?= localhost/kqos/kqosd
IMAGE_BASE ?= localhost/kqos-debian:12
REVISION ?= $(shell git rev-parse HEAD 2>/dev/null || echo unknown)
PREFIX ?= /usr/local
DESTDIR ?=
# kqos-top sits next to kqosd: --standalone starts the kqosd beside it.
SBINDIR ?= $(PREFIX)/sbin
DOCDIR ?= $(PREFIX)/share/doc/kqos
EXAMPLEDIR ?= $(PREFIX)/share/kqos/examples
SYSCONFDIR ?= /etc
UNITDIR ?= /etc/systemd/system
# runc, not Debian's default crun: crun 1.8 refuses hybrid hosts whose cgroup2 tree has a
# controller (hugetlb here). Explicit rlimits: podman's defaults (1M files) need CAP_SYS_RESOURCE
# to set, which a nested root (a VM sandbox, a CI runner) may not have.
ENGINE_FLAGS ?= --runtime runc --ulimit nofile=16384:16384 --ulimit nproc=8192:8192

.PHONY: image image-base image-test deploy-check deploy-deps install help-deploy quickstart-test \
	image-clean \
	unit-test
# The unit names the binary and docs by the default PREFIX; install rewrites both.
UNIT_SED = -e 's|/usr/local/sbin/kqosd|$(SBINDIR)/kqosd|' \
	-e 's|/usr/local/share/doc/kqos|$(DOCDIR)|'

deploy-deps:
	$(Q)scripts/deps.sh deploy

image-base: deploy-deps
	$(Q)ENGINE=$(ENGINE) BASE=$(IMAGE_BASE) deploy/image/base.sh

# Layers are cached: a second build with unchanged sources takes seconds.
image: image-base
	$(call msg,IMAGE,$(IMAGE):$(VERSION))
	$(Q)$(ENGINE) build --quiet --format docker $(ENGINE_FLAGS) --network=host -f deploy/Dockerfile \
		$(IMAGE_BUILD_FLAGS) \
		--build-arg BASE=$(IMAGE_BASE) --build-arg VERSION=$(VERSION) \
		--build-arg REVISION=$(REVISION) \
		-t $(IMAGE):$(VERSION) -t $(IMAGE):latest . >/dev/null
	$(Q)$(ENGINE) image inspect --format '  image    {{.Size}} bytes, version {{index .Labels "org.opencontainers.image.version"}}' $(IMAGE):latest

help-deploy:
	@echo 'deploy (docs/deploy.md)'
	@echo '  make image        build $(IMAGE) with $(ENGINE) (base: $(IMAGE_BASE), made by mmdebstrap)'
	@echo '  make image-test   root: run the image as the DaemonSet would, least privilege, health'
	@echo '  make deploy-check validate manifests, example configs, Prometheus rules, systemd unit'
	@echo '  make unit-test    root: the installed unit run by systemd booted in a container'
	@echo '  make quickstart-test  root: the README quick start (bare-metal example)'
	@echo '  make image-clean  remove every kqos image but :latest, and unused build stages'
	@echo '  make install      PREFIX=$(PREFIX) DESTDIR=: binaries, unit, example config, docs'

# npm's kubernetes-models and yaml, as package-lock.json pins them, for the manifest checks.
DEPLOY_NODE := deploy/check/node_modules/.package-lock.json
$(DEPLOY_NODE): deploy/check/package-lock.json
	$(Q)scripts/deps.sh check
	$(call msg,NPM,deploy/check/node_modules)
	$(Q)cd deploy/check && npm ci --no-audit --no-fund --silent

# Live, as root: the DaemonSet's settings under podman (deploy/image/image-test.sh).
image-test: image $(KQOSTOP) $(DEPLOY_NODE)
	$(Q)OUTPUT=$(OUTPUT) ENGINE=$(ENGINE) IMAGE=$(IMAGE):latest ENGINE_FLAGS="$(ENGINE_FLAGS)" \
		deploy/image/image-test.sh

# Manifests, example configs, Prometheus rules, the systemd unit (deploy/check/check.sh).
deploy-check: $(KQOSD) $(DEPLOY_NODE)
	$(Q)scripts/deps.sh check
	$(Q)OUTPUT=$(OUTPUT) deploy/check/check.sh

# Binaries, the unit, the example configs and the docs. /etc/kqos/kqosd.json is written only
# when absent: an upgrade keeps the admin's config.
install: $(KQOSD) $(KQOSTOP)
	$(call msg,INSTALL,$(DESTDIR)$(PREFIX))
	$(Q)install -D -m 0755 $(KQOSD) $(DESTDIR)$(SBINDIR)/kqosd
	$(Q)install -D -m 0755 $(OUTPUT)/kqos-top $(DESTDIR)$(SBINDIR)/kqos-top
	$(Q)install -d $(DESTDIR)$(UNITDIR) $(DESTDIR)$(EXAMPLEDIR) $(DESTDIR)$(DOCDIR) \
		$(DESTDIR)$(SYSCONFDIR)/kqos
	$(Q)sed $(UNIT_SED) deploy/kqosd.service >$(DESTDIR)$(UNITDIR)/kqosd.service
	$(Q)chmod 0644 $(DESTDIR)$(UNITDIR)/kqosd.service
	$(Q)install -m 0644 deploy/examples/*.json $(DESTDIR)$(EXAMPLEDIR)/
	$(Q)install -m 0755 deploy/examples/run-in-group.sh $(DESTDIR)$(EXAMPLEDIR)/
	$(Q)install -m 0644 README.md docs/*.md $(DESTDIR)$(DOCDIR)/
	$(Q)[ -e $(DESTDIR)$(SYSCONFDIR)/kqos/kqosd.json ] || \
		install -m 0644 deploy/kqosd.json $(DESTDIR)$(SYSCONFDIR)/kqos/kqosd.json

# Live, as root: the README's quick start (deploy/examples/quickstart-test.sh).
quickstart-test: $(KQOSD) $(KQOSTOP)
	$(Q)OUTPUT=$(OUTPUT) deploy/examples/quickstart-test.sh

# Live, as root: deploy/kqosd.service run by systemd 252 booted in a container
# (deploy/systemd/unit-test.sh).
unit-test: image-base $(KQOSD) $(KQOSTOP)
	$(Q)OUTPUT=$(OUTPUT) ENGINE=$(ENGINE) BASE=$(IMAGE_BASE) ENGINE_FLAGS="$(ENGINE_FLAGS)" \
		deploy/systemd/unit-test.sh

# Every build keeps its tag and its build stage (the layer cache: the next build takes ~12 s
# instead of 1 s once they are gone); this drops all but :latest
# and the stages no tag needs any more.
image-clean:
	$(Q)$(ENGINE) images --format '{{.Repository}}:{{.Tag}}' $(IMAGE) | grep -v ':latest$$' | \
		xargs -r $(ENGINE) rmi >/dev/null
	$(Q)$(ENGINE) image prune -f >/dev/null
