#!/usr/bin/env bash
# `cmake --install` of this build into a temporary prefix, then a small C program compiled and linked
# with nothing but `pkg-config --cflags --libs ltx2`, run against the installed libltx2.so (#16 item 6).
# Usage: cli_install.sh LTX2_BINARY SOURCE_DIR (the build directory is the binary's).
set -u
build="$(cd "$(dirname "$1")" && pwd)"
tmp="$(mktemp -d /tmp/ltx2_cli_install.XXXXXX)"
trap 'rm -rf "$tmp"' EXIT
if ! grep -q '^LTX2_HAVE_SHARED:INTERNAL=ON' "$build/CMakeCache.txt" 2>/dev/null && [ ! -e "$build/libltx2.so" ]; then
    echo "skipped: this build has no shared library (sanitizer or fuzz build, or LTX2_SHARED=OFF)"
    exit 77
fi
command -v pkg-config >/dev/null || { echo "skipped: no pkg-config"; exit 77; }
fail=0
cmake --install "$build" --prefix "$tmp/prefix" >"$tmp/install.log" 2>&1 || { echo "FAIL: cmake --install"; cat "$tmp/install.log"; exit 1; }
pc=$(find "$tmp/prefix" -name ltx2.pc | head -1)
[ -n "$pc" ] || { echo "FAIL: no ltx2.pc installed"; exit 1; }
export PKG_CONFIG_PATH="$(dirname "$pc")"
cat >"$tmp/use.c" <<'C'
#include <ltx2/ltx2.h>
#include <stdio.h>
#include <string.h>

int main(void) {
    ltx2_context *ctx = ltx2_context_create(NULL);
    if (!ctx) return 1;
    printf("ltx2 %s, status 'cancelled' is '%s'\n", ltx2_version(), ltx2_status_name(LTX2_ERR_CANCELLED));
    ltx2_generate_params p;
    ltx2_generate_params_init(&p);
    ltx2_generate_result r;
    /* no checkpoint: a clear refusal, not a crash */
    const ltx2_status st = ltx2_generate(ctx, &p, &r);
    printf("generate without a checkpoint: %s: %s\n", ltx2_status_name(st), ltx2_last_error(ctx));
    /* the multi-rank API links too: a mesh of 2 ranks asked to hold 3 is refused before any work */
    ltx2_parallel_params pp;
    ltx2_parallel_params_init(&pp);
    pp.ranks = 3;
    pp.mesh = "1,1,2,1";
    const ltx2_status sp = ltx2_generate_parallel(ctx, &p, &pp, &r);
    printf("generate_parallel, 3 ranks on a 2-rank mesh: %s: %s\n", ltx2_status_name(sp), ltx2_last_error(ctx));
    ltx2_model *m = NULL;
    const char *ck = "/nonexistent.safetensors";
    const ltx2_status sm = ltx2_model_load_parallel(ctx, &ck, 1, "cpu", NULL, &pp, &m);
    ltx2_context_free(ctx);
    return st == LTX2_ERR_INVALID_ARG && sp == LTX2_ERR_INVALID_ARG && sm == LTX2_ERR_INVALID_ARG && !m &&
                   strstr(ltx2_status_name(LTX2_ERR_CANCELLED), "cancel")
               ? 0
               : 1;
}
C
if cc "$tmp/use.c" $(pkg-config --cflags --libs ltx2) -o "$tmp/use" 2>"$tmp/cc.log"; then
    echo "ok: linked with pkg-config --cflags --libs ltx2"
else
    echo "FAIL: compiling against the installed library"; cat "$tmp/cc.log"; fail=1
fi
libdir=$(pkg-config --variable=libdir ltx2)
if [ "$fail" -eq 0 ]; then
    if LD_LIBRARY_PATH="$libdir" "$tmp/use"; then echo "ok: ran against $libdir/libltx2.so"; else echo "FAIL: the program"; fail=1; fi
fi
# the installed CLI runs as installed: no LD_LIBRARY_PATH (it finds libltx2_kernels.so by its RUNPATH)
if [ -x "$tmp/prefix/bin/ltx2" ] && env -u LD_LIBRARY_PATH "$tmp/prefix/bin/ltx2" --version >"$tmp/version.log" 2>&1; then
    echo "ok: ltx2 installed and runs"
else
    echo "FAIL: bin/ltx2 missing or does not run"; cat "$tmp/version.log" 2>/dev/null; fail=1
fi
[ -f "$tmp/prefix/include/ltx2/tensor.h" ] && echo "ok: headers installed" || { echo "FAIL: headers"; fail=1; }
[ "$fail" -eq 0 ] && echo "4 passed, 0 failed" || echo "failed"
exit "$fail"
