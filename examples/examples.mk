# make install (PREFIX, DESTDIR) and the embedding example built against the installed library.
#   make install PREFIX=/usr/local DESTDIR=   lib/libhcq.a, include/hcq.h (+ the headers it includes, under
#                                             include/hcq/), bin/hcq,
#                                             lib/pkgconfig/hcq.pc
#   make install-test                         install into a temporary DESTDIR, build examples/embed.c with
#                                             pkg-config against it, run it (part of `make test`)
PREFIX ?= /usr/local
# The installed headers are hcq/hcq.h (as include/hcq.h) and what it includes, found by the compiler (not listed by
# hand), under include/hcq/ so that their folder names (base/, hcq/) stay out of the include root.
PUBLIC_HEADERS = $(filter-out hcq/hcq.h,$(filter %.h,$(shell $(CC) -MM -I. hcq/hcq.h | tr -d '\\\n' | cut -d: -f2)))
HCQ_VERSION := 0.1

.PHONY: install install-test
TEST_EXTRA += install-test

install: $(LIB) $(HCQ)
	install -d $(DESTDIR)$(PREFIX)/lib/pkgconfig $(DESTDIR)$(PREFIX)/include $(DESTDIR)$(PREFIX)/bin
	install -m 644 $(LIB) $(DESTDIR)$(PREFIX)/lib/libhcq.a
	install -m 755 $(HCQ) $(DESTDIR)$(PREFIX)/bin/hcq
	install -m 644 hcq/hcq.h $(DESTDIR)$(PREFIX)/include/hcq.h
	for h in $(PUBLIC_HEADERS); do install -D -m 644 $$h $(DESTDIR)$(PREFIX)/include/hcq/$$h || exit 1; done
	printf 'prefix=%s\nlibdir=$${prefix}/lib\nincludedir=$${prefix}/include\n\nName: hcq\nDescription: %s\nVersion: %s\nLibs: -L$${libdir} -lhcq -lpthread -lm -ldl\nCflags: -I$${includedir} -I$${includedir}/hcq\n' \
	  '$(PREFIX)' 'GPU/CPU compute runtime and kernel compiler without vendor runtimes' '$(HCQ_VERSION)' \
	  > $(DESTDIR)$(PREFIX)/lib/pkgconfig/hcq.pc

# As a user would: only the installed files, found through pkg-config (the sysroot maps PREFIX into DESTDIR);
# SANITIZE=1 libraries need the sanitizer runtime in the program too.
install-test: $(LIB) $(HCQ)
	@d=$$(mktemp -d) && trap 'rm -rf $$d' EXIT && \
	$(MAKE) --no-print-directory -s install DESTDIR=$$d PREFIX=/usr/local >/dev/null && \
	export PKG_CONFIG_PATH=$$d/usr/local/lib/pkgconfig PKG_CONFIG_SYSROOT_DIR=$$d && \
	flags="$$(pkg-config --cflags --libs hcq)" && echo "install-test: cc examples/embed.c $$flags" && \
	$(CC) -std=c11 -Wall -Wextra -Werror -O2 $(SANFLAGS) examples/embed.c -o $$d/embed $$flags && \
	$$d/usr/local/bin/hcq compile --target c --arch $$(uname -m | sed 's/^armv.*/armhf/') \
	  -o $$d/saxpy.img examples/saxpy.uop && \
	$$d/embed $$d/saxpy.img
