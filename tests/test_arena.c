/* Arena allocator: alignment, exhaustion (NULL plus an error naming requested/used/capacity),
 * mark/reset, peak tracking, bad arguments. */
#include <stdint.h>
#include <string.h>

#include "core/arena.h"
#include "core/context.h"
#include "test_util.h"

#define ARENA_CAP 1000

int main(void) {
    ltx2_context *ctx = ltx2_context_create(NULL);
    ltx2_arena a;
    CHECK(ltx2_arena_create(ctx, &a, ARENA_CAP) == LTX2_OK, "create: %s", ltx2_last_error(ctx));
    CHECK(((uintptr_t)a.base % LTX2_ARENA_BASE_ALIGN) == 0, "base aligned");
    CHECK(ltx2_arena_used(&a) == 0 && ltx2_arena_peak(&a) == 0, "fresh arena is empty");

    char *p1 = ltx2_arena_alloc(ctx, &a, 3, 1);
    CHECK(p1 == (char *)a.base && ltx2_arena_used(&a) == 3, "first alloc at base");
    memset(p1, 1, 3);
    char *p2 = ltx2_arena_alloc(ctx, &a, 10, 16);
    CHECK(p2 && ((uintptr_t)p2 % 16) == 0 && p2 == (char *)a.base + 16, "16-aligned after padding");
    CHECK(ltx2_arena_used(&a) == 26, "used counts padding: %zu", ltx2_arena_used(&a));
    char *p3 = ltx2_arena_alloc(ctx, &a, 8, 0);
    CHECK(p3 && ((uintptr_t)p3 % LTX2_ARENA_BASE_ALIGN) == 0, "align 0 means the default");
    char *p4 = ltx2_arena_alloc(ctx, &a, 1, 256);
    CHECK(p4 && ((uintptr_t)p4 % 256) == 0, "alignment larger than the base's");
    void *z = ltx2_arena_alloc(ctx, &a, 0, 8);
    CHECK(z != NULL, "size 0 gives a pointer");

    size_t mark = ltx2_arena_mark(&a);
    char *p5 = ltx2_arena_alloc(ctx, &a, 100, 8);
    CHECK(p5 != NULL, "alloc after mark");
    size_t peak = ltx2_arena_peak(&a);
    CHECK(ltx2_arena_reset_to(ctx, &a, mark) == LTX2_OK && ltx2_arena_used(&a) == mark, "reset to mark");
    CHECK(ltx2_arena_alloc(ctx, &a, 100, 8) == p5, "memory after the mark is reused");
    CHECK(ltx2_arena_peak(&a) == peak, "peak unchanged by reuse");
    CHECK(ltx2_arena_reset_to(ctx, &a, ARENA_CAP + 1) == LTX2_ERR_INVALID_ARG, "mark past used refused");

    /* exhaustion */
    size_t used = ltx2_arena_used(&a);
    ltx2_clear_error(ctx);
    void *big = ltx2_arena_alloc(ctx, &a, ARENA_CAP, 1);
    CHECK(big == NULL && ltx2_last_status(ctx) == LTX2_ERR_OOM, "exhaustion returns NULL + OOM");
    char want[128];
    snprintf(want, sizeof(want), "requested %d bytes", ARENA_CAP);
    CHECK(strstr(ltx2_last_error(ctx), want) != NULL, "message names the request: %s", ltx2_last_error(ctx));
    snprintf(want, sizeof(want), "used %zu of capacity %d", used, ARENA_CAP);
    CHECK(strstr(ltx2_last_error(ctx), want) != NULL, "message names used/capacity: %s", ltx2_last_error(ctx));
    CHECK(ltx2_arena_used(&a) == used, "failed alloc changes nothing");
    CHECK(ltx2_arena_alloc(ctx, &a, SIZE_MAX, 1) == NULL, "SIZE_MAX does not wrap");
    CHECK(ltx2_arena_alloc(ctx, &a, 1, 3) == NULL && ltx2_last_status(ctx) == LTX2_ERR_INVALID_ARG,
          "non-power-of-two alignment");

    /* exactly filling the arena works */
    ltx2_arena_reset(&a);
    CHECK(ltx2_arena_used(&a) == 0, "reset");
    void *all = ltx2_arena_alloc(ctx, &a, ARENA_CAP, 1);
    CHECK(all == a.base, "whole capacity in one go");
    CHECK(ltx2_arena_alloc(ctx, &a, 1, 1) == NULL, "then nothing more");
    CHECK(ltx2_arena_peak(&a) == ARENA_CAP, "peak = capacity");

    ltx2_arena_destroy(&a);
    CHECK(a.base == NULL && a.cap == 0, "destroy clears");
    CHECK(ltx2_arena_alloc(ctx, &a, 1, 1) == NULL, "alloc on destroyed arena fails cleanly");
    ltx2_arena_destroy(&a); /* twice is harmless */

    ltx2_arena b;
    CHECK(ltx2_arena_create(ctx, &b, 0) == LTX2_ERR_INVALID_ARG, "capacity 0 refused");
    CHECK(ltx2_arena_create(ctx, &b, SIZE_MAX) != LTX2_OK && b.base == NULL, "huge capacity fails cleanly");
    ltx2_context_free(ctx);
    return test_finish();
}
