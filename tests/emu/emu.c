/* CPU emulator runtime: runs a CUDA grid with one fiber (ucontext) per thread of a block, blocks
 * one after another, and every collective as a rendezvous of its participants under one block-wide
 * lock. A block's fibers run on the launching thread: a thread that waits at a collective switches
 * back to the scheduler loop, which resumes the next runnable one; the last arriver computes the
 * result for everyone (from the PTX ISA / CUDA documentation semantics) and marks them runnable.
 * A collective costs a user-space context switch per thread (threads as pthreads cost a futex
 * wake-up and a kernel context switch each, ~20x more). Under AddressSanitizer and
 * ThreadSanitizer the switches are announced to them; ThreadSanitizer sees every fiber as a thread
 * and the switches as unsynchronised, so a missing __syncthreads is still a reported race.
 * Deadlock needs no timeout: when every live thread of the block is blocked in a collective, no
 * collective can complete any more (completions happen under the lock, by the last arriver), so
 * the thread that blocks last reports it, with where every thread waits. A fault wakes all
 * blocked threads, which longjmp back to their entry (kernel frames hold only trivially
 * destructible objects), so the launch always ends with every thread joined.
 * cp.async copies are queued per thread and land only at the cp.async.wait_group that covers
 * their group: the latest moment the PTX memory model allows, so a missing wait reads stale data;
 * emu_race.c checks the other side (a refill issued while other warps still read the stage).
 * Process-wide state (the last fault message, the collective counter) is test-harness state, not
 * library state. One launch at a time: static __shared__ arrays are one object per kernel. */
/* makecontext / swapcontext (POSIX.1-2001, kept by glibc). */
#define _DEFAULT_SOURCE
#include "emu.h"
#include "emu_race.h"

#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <ucontext.h>

#include "emu_internal.h"

/* The sanitizers must hear about stack switches (ASan: which stack is live; TSan: which "thread"). */
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define EMU_ASAN 1
#endif
#if __has_feature(thread_sanitizer)
#define EMU_TSAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) && !defined(EMU_ASAN)
#define EMU_ASAN 1
#endif
#if defined(__SANITIZE_THREAD__) && !defined(EMU_TSAN)
#define EMU_TSAN 1
#endif
#ifdef EMU_ASAN
#include <sanitizer/common_interface_defs.h>
#endif
#ifdef EMU_TSAN
#include <sanitizer/tsan_interface.h>
#endif

const char *const emu_kind_name[] = {"(none)", "__syncthreads", "__syncthreads_or", "__syncwarp",
                                     "__shfl_xor_sync", "ldmatrix.x4", "ldmatrix.x4.trans", "mma.m16n8k16",
                                     "mbarrier.try_wait.parity", "bar.sync (named)", "setmaxnreg",
                                     "wgmma.fence", "wgmma.commit_group", "wgmma.wait_group",
                                     "wgmma.mma_async", "(mbarrier handoff)"};

static LTX2_EMU_TLS int emu_last_error;

static pthread_mutex_t emu_global_mu = PTHREAD_MUTEX_INITIALIZER;
static char emu_fault_msg[EMU_MSG_BYTES];
static int emu_has_fault;
static uint64_t emu_collectives_total;

/* ---- messages ---------------------------------------------------------------------------------- */

const char *emu_base(const char *path) {
    if (!path) return "?";
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

/* Appends to a bounded buffer; silently truncates. */
void emu_cat(char *buf, size_t cap, const char *fmt, ...) {
    size_t len = strlen(buf);
    if (len + 1 >= cap) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf + len, cap - len, fmt, ap);
    va_end(ap);
}

/* "0-3,7,9-31" from a lane bit set. */
static void emu_lanes_str(uint32_t bits, char *buf, size_t cap) {
    buf[0] = 0;
    for (int i = 0; i < EMU_WARP;) {
        if (!(bits >> i & 1u)) {
            i++;
            continue;
        }
        int j = i;
        while (j + 1 < EMU_WARP && (bits >> (j + 1) & 1u)) j++;
        emu_cat(buf, cap, buf[0] ? ",%d" : "%d", i);
        if (j > i) emu_cat(buf, cap, "-%d", j);
        i = j + 1;
    }
}

static void emu_thread_desc(const emu_thread *t, char *buf, size_t cap) {
    if (t->state == S_WAITING)
        snprintf(buf, cap, "at %s%s%s (%s:%d)", emu_kind_name[t->kind], t->detail[0] ? " " : "", t->detail,
                 emu_base(t->file), t->line);
    else if (t->state == S_EXITED)
        snprintf(buf, cap, "exited");
    else
        snprintf(buf, cap, "running");
}

/* Every thread's state grouped by state: "N threads at X (0-31, 64-95)", the first few ranges of
 * each group listed. */
#define EMU_RANGES_LISTED 6
static void emu_states_str(const emu_launch *L, char *buf, size_t cap) {
    char desc[160], other[160];
    unsigned char *done = calloc((size_t)L->nthreads, 1);
    if (!done) return;
    for (int i = 0; i < L->nthreads; i++) {
        if (done[i]) continue;
        emu_thread_desc(&L->threads[i], desc, sizeof desc);
        int count = 0, ranges = 0;
        char list[512];
        list[0] = 0;
        for (int j = i; j < L->nthreads; j++) {
            if (done[j]) continue;
            emu_thread_desc(&L->threads[j], other, sizeof other);
            if (strcmp(desc, other) != 0) continue;
            int k = j; /* the run j..k of threads in this state */
            while (k + 1 < L->nthreads && !done[k + 1]) {
                emu_thread_desc(&L->threads[k + 1], other, sizeof other);
                if (strcmp(desc, other) != 0) break;
                k++;
            }
            for (int m = j; m <= k; m++) done[m] = 1;
            count += k - j + 1;
            if (ranges++ < EMU_RANGES_LISTED) {
                emu_cat(list, sizeof list, ranges > 1 ? ", %d" : "%d", j);
                if (k > j) emu_cat(list, sizeof list, "-%d", k);
            } else if (ranges == EMU_RANGES_LISTED + 1) {
                emu_cat(list, sizeof list, ", ...");
            }
            j = k;
        }
        emu_cat(buf, cap, "%s%d thread%s %s (%s)", buf[0] ? "; " : "", count, count > 1 ? "s" : "", desc, list);
    }
    free(done);
}

/* "K" out of g++/clang's __PRETTY_FUNCTION__ "... [with auto K = K; A = ...]" (the launch helper's
 * signature), without the wrapper namespace. */
static void emu_kernel_name(const char *pretty, char *out, size_t cap) {
    const char *s = pretty ? strstr(pretty, "K = ") : NULL;
    if (!s) {
        snprintf(out, cap, "%s", pretty ? pretty : "?");
        return;
    }
    s += 4;
    if (*s == '&') s++;
    size_t n = 0;
    int depth = 0;
    for (; s[n]; n++) {
        if (s[n] == '<' || s[n] == '(') depth++;
        if (s[n] == '>' || s[n] == ')') depth--;
        if (depth <= 0 && (s[n] == ';' || s[n] == ']' || (depth < 0 && s[n] == ')'))) break;
    }
    const char *ns = "ltx2_emu_ns::";
    if (strncmp(s, ns, strlen(ns)) == 0) {
        s += strlen(ns);
        n -= strlen(ns);
    }
    snprintf(out, cap, "%.*s", (int)n, s);
}

/* ---- fibers, sleeping and waking -------------------------------------------------------------
 * A waiter yields to the scheduler until its collective's generation word (the warp's, the block
 * barrier's, or its own) has moved: the completer bumps it and marks the waiters runnable. */

/* Switches from the running context to `to` (stack [bottom, bottom + size) for ASan). dying: the
 * current fiber never runs again. */
static void emu_switch(ucontext_t *from, ucontext_t *to, const void *bottom, size_t size, void *tsan_to, bool dying) {
#ifdef EMU_ASAN
    void *fake = NULL;
    __sanitizer_start_switch_fiber(dying ? NULL : &fake, bottom, size);
#else
    (void)bottom, (void)size, (void)dying;
#endif
#ifdef EMU_TSAN
    __tsan_switch_to_fiber(tsan_to, __tsan_switch_to_fiber_no_sync);
#else
    (void)tsan_to;
#endif
    swapcontext(from, to);
#ifdef EMU_ASAN
    __sanitizer_finish_switch_fiber(fake, NULL, NULL);
#endif
}

/* The running fiber gives the launching thread back its scheduler. */
static void emu_yield(emu_thread *t, bool dying) {
    emu_launch *L = t->L;
    emu_switch(&t->uc, &L->sched, L->sched_stack, L->sched_stack_size, L->sched_tsan_fiber, dying);
}

static void emu_gate_wait(emu_thread *t, uint32_t *gate, uint32_t seen) {
    while (__atomic_load_n(gate, __ATOMIC_ACQUIRE) == seen) emu_yield(t, false);
}

/* Lock held. */
void emu_gate_open(uint32_t *gate) { __atomic_store_n(gate, *gate + 1, __ATOMIC_RELEASE); }

static int emu_is_barrier(int kind) { return kind == K_SYNCTHREADS || kind == K_SYNCTHREADS_OR; }

/* ---- faults ------------------------------------------------------------------------------------ */

/* Records the launch's first fault (t: the thread it concerns, or NULL) and wakes every blocked
 * thread to unwind. Lock held. */
void emu_fault_locked(emu_launch *L, const emu_thread *t, const char *fmt, ...) {
    if (L->fault) return;
    L->fault = 1;
    char detail[EMU_MSG_BYTES], msg[EMU_MSG_BYTES];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(detail, sizeof detail, fmt, ap);
    va_end(ap);
    snprintf(msg, sizeof msg, "kernel %s, block (%u,%u,%u)", L->name, L->block_idx.x, L->block_idx.y,
             L->block_idx.z);
    if (t) emu_cat(msg, sizeof msg, ", thread %d (warp %d, lane %d)", t->tid, t->warp, t->lane);
    emu_cat(msg, sizeof msg, ": %s", detail);
    fprintf(stderr, "[emu] fault: %s\n", msg);
    pthread_mutex_lock(&emu_global_mu);
    memcpy(emu_fault_msg, msg, sizeof msg);
    emu_has_fault = 1;
    pthread_mutex_unlock(&emu_global_mu);
    for (int i = 0; i < L->nthreads; i++) {
        emu_thread *w = &L->threads[i];
        if (w->state != S_WAITING) continue;
        w->state = S_RUNNING;
        w->wake = W_UNWIND;
        if (w->kind != K_HANDOFF) L->blocked--;
        emu_gate_open(&w->gate);
    }
    for (int i = 0; i < L->nwarps; i++) emu_gate_open(&L->warps[i].gen);
    emu_gate_open(&L->bar_gen);
}

static void emu_deadlock_locked(emu_launch *L) {
    char states[EMU_MSG_BYTES];
    states[0] = 0;
    emu_states_str(L, states, sizeof states);
    emu_fault_locked(L, NULL, "deadlock: every live thread waits at a collective that cannot complete: %s", states);
}

void emu_unwind_locked(emu_thread *t) {
    pthread_mutex_unlock(&t->L->mu);
    longjmp(t->jb, 1);
}

/* The fibers' stacks: one reservation of EMU_MAX_BLOCK_THREADS stacks, stack i for thread i of the
 * running block, so the stack a call runs on says which emulated thread it is. */
static unsigned char *emu_stack_base;
static emu_launch *emu_fiber_launch; /* the running launch (one at a time) */

static emu_thread *emu_here(void) {
    unsigned char probe;
    const uintptr_t p = (uintptr_t)&probe, b = (uintptr_t)emu_stack_base;
    if (!emu_fiber_launch || p < b || p >= b + (uintptr_t)EMU_MAX_BLOCK_THREADS * EMU_STACK_BYTES) return NULL;
    const int i = (int)((p - b) / EMU_STACK_BYTES);
    return i < emu_fiber_launch->nthreads ? &emu_fiber_launch->threads[i] : NULL;
}

const ltx2_emu_builtins *ltx2_emu_builtins_here(void) {
    emu_thread *t = emu_here();
    return t ? &t->bi : NULL;
}

emu_thread *emu_self(const char *what) {
    emu_thread *t = emu_here();
    if (!t) {
        fprintf(stderr, "[emu] %s called outside an emulated kernel\n", what);
        abort();
    }
    return t;
}

/* Takes the block lock for a collective; unwinds at once when the block has faulted. */
emu_thread *emu_enter(const char *what) {
    emu_thread *t = emu_self(what);
    pthread_mutex_lock(&t->L->mu);
    if (t->L->fault) emu_unwind_locked(t);
    return t;
}

/* Parks the calling thread (lock held, released here) until the last arriver releases it. */
void emu_block(emu_thread *t, int kind, const char *file, int line) {
    emu_launch *L = t->L;
    emu_sm90_handoff_done(L, t);
    t->state = S_WAITING;
    t->wake = W_NONE;
    t->kind = kind;
    t->file = file;
    t->line = line;
    if (kind < K_FIRST_OWN_GATE) t->detail[0] = 0;
    if (kind != K_HANDOFF) L->blocked++; /* a handoff always ends: it waits for threads to block */
    uint32_t *gate = emu_is_barrier(kind) ? &L->bar_gen : kind >= K_FIRST_OWN_GATE ? &t->gate : &L->warps[t->warp].gen;
    const uint32_t seen = *gate;
    if (L->blocked == L->live) emu_deadlock_locked(L); /* marks t W_UNWIND too */
    pthread_mutex_unlock(&L->mu);
    emu_gate_wait(t, gate, seen);
    if (t->wake == W_UNWIND) longjmp(t->jb, 1);
}

void emu_release_locked(emu_launch *L, emu_thread *w) {
    w->state = S_RUNNING;
    w->wake = W_RELEASED;
    if (w->kind != K_HANDOFF) L->blocked--;
    if (w->kind >= K_FIRST_OWN_GATE) emu_gate_open(&w->gate);
}

void ltx2_emu_fault(const char *file, int line, const char *what) {
    emu_thread *t = emu_self("ltx2_emu_fault");
    pthread_mutex_lock(&t->L->mu);
    emu_fault_locked(t->L, t, "%s (%s:%d)", what, emu_base(file), line);
    emu_unwind_locked(t);
}

/* ---- block barrier ----------------------------------------------------------------------------- */

static void emu_complete_barrier_locked(emu_launch *L, emu_thread *self) {
    const int result = L->bar_or;
    for (int i = 0; i < L->nthreads; i++) {
        emu_thread *w = &L->threads[i];
        if (w == self || w->state != S_WAITING) continue;
        if (w->kind != K_SYNCTHREADS && w->kind != K_SYNCTHREADS_OR) continue;
        w->out = (uint64_t)result;
        emu_release_locked(L, w);
    }
    if (self) self->out = (uint64_t)result;
    emu_race_barrier(L->race);
    emu_gate_open(&L->bar_gen);
    L->bar_arrived = 0;
    L->bar_kind = K_NONE;
    L->bar_or = 0;
    L->collectives++;
}

static int emu_barrier(int kind, int pred, const char *file, int line) {
    emu_thread *t = emu_enter(emu_kind_name[kind]);
    emu_launch *L = t->L;
    if (L->bar_arrived && L->bar_kind != kind) {
        emu_fault_locked(L, t, "divergence: %s (%s:%d) while other threads wait at %s", emu_kind_name[kind],
                         emu_base(file), line, emu_kind_name[L->bar_kind]);
        emu_unwind_locked(t);
    }
    L->bar_kind = kind;
    L->bar_or |= pred != 0;
    if (++L->bar_arrived < L->live) {
        emu_block(t, kind, file, line);
        return (int)t->out;
    }
    emu_complete_barrier_locked(L, t);
    pthread_mutex_unlock(&L->mu);
    return (int)t->out;
}

void ltx2_emu_syncthreads(const char *file, int line) { (void)emu_barrier(K_SYNCTHREADS, 0, file, line); }

int ltx2_emu_syncthreads_or(int pred, const char *file, int line) {
    return emu_barrier(K_SYNCTHREADS_OR, pred, file, line);
}

/* ---- warp collectives -------------------------------------------------------------------------- */

static float emu_bf16_lo(uint32_t r) {
    uint32_t u = r << 16;
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}
static float emu_bf16_hi(uint32_t r) {
    uint32_t u = r & 0xffff0000u;
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* __shfl_xor_sync: source lane = lane ^ laneMask; with width < 32 a lane may read earlier groups
 * but reading a later one (or past the warp) returns its own value (CUDA C++ Programming Guide,
 * "Warp Shuffle Functions"). */
static void emu_do_shfl(emu_thread *lanes) {
    for (int l = 0; l < EMU_WARP; l++) {
        const int src = l ^ lanes[l].imm, end = (l / lanes[l].width + 1) * lanes[l].width;
        lanes[l].out = (src < 0 || src >= end) ? lanes[l].bits : lanes[src].bits;
    }
}

/* ldmatrix .m8n8.x4 .b16 (PTX ISA, "Warp-level matrix load instruction: ldmatrix"): lanes 8i..8i+7
 * give the row addresses of matrix i, which lands in register i; a group of four lanes receives
 * one row, lane l the elements 2(l%4), 2(l%4)+1 of row l/4 (low half = lower column). .trans
 * delivers the matrix column-major: lane l gets column l/4, rows 2(l%4) and 2(l%4)+1. */
static int emu_do_ldmatrix(emu_launch *L, emu_thread *lanes, int trans) {
    for (int l = 0; l < EMU_WARP; l++)
        if ((uintptr_t)lanes[l].addr & 15u) {
            emu_fault_locked(L, &lanes[l], "%s (%s:%d): row address %p is not 16-byte aligned",
                             emu_kind_name[lanes[l].kind], emu_base(lanes[l].file), lanes[l].line, lanes[l].addr);
            return 0;
        }
    for (int l = 0; l < EMU_WARP; l++) {
        const emu_site site = {lanes[l].tid, lanes[l].warp, lanes[l].file, lanes[l].line};
        char msg[EMU_MSG_BYTES];
        if (emu_race_read(L->race, lanes[l].addr, site, msg, sizeof msg)) {
            emu_fault_locked(L, &lanes[l], "%s", msg);
            return 0;
        }
    }
    for (int l = 0; l < EMU_WARP; l++)
        for (int m = 0; m < 4; m++) {
            const emu_thread *rows = lanes + 8 * m;
            uint16_t lo, hi;
            if (!trans) {
                const unsigned char *p = (const unsigned char *)rows[l / 4].addr + 4 * (l % 4);
                memcpy(&lo, p, 2);
                memcpy(&hi, p + 2, 2);
            } else {
                memcpy(&lo, (const unsigned char *)rows[2 * (l % 4)].addr + 2 * (l / 4), 2);
                memcpy(&hi, (const unsigned char *)rows[2 * (l % 4) + 1].addr + 2 * (l / 4), 2);
            }
            lanes[l].r[m] = (uint32_t)lo | (uint32_t)hi << 16;
        }
    return 1;
}

/* mma.m16n8k16 .row.col .f32.bf16.bf16.f32 (PTX ISA, "Matrix Fragments for mma.m16n8k16 with
 * floating point type"), groupID g = lane / 4, threadID_in_group q = lane % 4:
 * A a0,a1 (g, 2q..2q+1), a2,a3 (g+8, 2q..), a4,a5 (g, 2q+8..), a6,a7 (g+8, 2q+8..);
 * B b0,b1 (k 2q..2q+1, n g), b2,b3 (k 2q+8.., n g); C/D c0,c1 (g, 2q..2q+1), c2,c3 (g+8, ..).
 * D = A B + C in fp32: each bf16 product is exact in fp32; the sum runs k = 0..15 onto C. */
static void emu_do_mma(emu_thread *lanes) {
    float A[16][16], B[16][8], C[16][8];
    for (int l = 0; l < EMU_WARP; l++) {
        const int g = l >> 2, q = l & 3;
        const emu_thread *t = &lanes[l];
        for (int r = 0; r < 4; r++) {
            const int row = g + (r & 1) * 8, col = 2 * q + (r >> 1) * 8;
            A[row][col] = emu_bf16_lo(t->a[r]);
            A[row][col + 1] = emu_bf16_hi(t->a[r]);
        }
        for (int r = 0; r < 2; r++) {
            B[2 * q + 8 * r][g] = emu_bf16_lo(t->b[r]);
            B[2 * q + 8 * r + 1][g] = emu_bf16_hi(t->b[r]);
        }
        for (int i = 0; i < 4; i++) C[g + (i >> 1) * 8][2 * q + (i & 1)] = t->c[i];
    }
    for (int l = 0; l < EMU_WARP; l++) {
        const int g = l >> 2, q = l & 3;
        for (int i = 0; i < 4; i++) {
            const int row = g + (i >> 1) * 8, col = 2 * q + (i & 1);
            float acc = C[row][col];
            for (int k = 0; k < 16; k++) acc += A[row][k] * B[k][col];
            lanes[l].d[i] = acc;
        }
    }
}

/* The calling lane arrives (operands already stored, lock held); the 32nd arrival computes. */
static void emu_warp_op(emu_thread *t, int kind, const char *file, int line) {
    emu_launch *L = t->L;
    emu_warp *w = &L->warps[t->warp];
    char lanes[128];
    if (w->lanes < EMU_WARP) {
        emu_fault_locked(L, t, "full-mask %s (%s:%d) in warp %d of only %d threads: the mask names lanes that do not exist",
                         emu_kind_name[kind], emu_base(file), line, t->warp, w->lanes);
        emu_unwind_locked(t);
    }
    if (w->exited) {
        emu_lanes_str(w->exited, lanes, sizeof lanes);
        emu_fault_locked(L, t, "full-mask %s (%s:%d) after lanes %s of warp %d exited", emu_kind_name[kind],
                         emu_base(file), line, lanes, t->warp);
        emu_unwind_locked(t);
    }
    if (w->arrived && w->kind != kind) {
        uint32_t waiting = 0;
        for (int l = 0; l < EMU_WARP; l++)
            if (L->threads[t->warp * EMU_WARP + l].state == S_WAITING) waiting |= 1u << l;
        emu_lanes_str(waiting, lanes, sizeof lanes);
        emu_fault_locked(L, t, "divergence: %s (%s:%d) while lanes %s of warp %d wait at %s (%s:%d)",
                         emu_kind_name[kind], emu_base(file), line, lanes, t->warp, emu_kind_name[w->kind],
                         emu_base(w->file), w->line);
        emu_unwind_locked(t);
    }
    if (!w->arrived) {
        w->kind = kind;
        w->file = file;
        w->line = line;
    }
    t->kind = kind; /* operand checks name the site */
    t->file = file;
    t->line = line;
    if (++w->arrived < EMU_WARP) {
        emu_block(t, kind, file, line);
        return;
    }
    w->arrived = 0;
    w->kind = K_NONE;
    emu_thread *lane0 = &L->threads[t->warp * EMU_WARP];
    if (kind == K_SHFL) emu_do_shfl(lane0);
    if (kind == K_MMA) emu_do_mma(lane0);
    if ((kind == K_LDMATRIX || kind == K_LDMATRIX_T) && !emu_do_ldmatrix(L, lane0, kind == K_LDMATRIX_T))
        emu_unwind_locked(t);
    for (int l = 0; l < EMU_WARP; l++)
        if (&lane0[l] != t) emu_release_locked(L, &lane0[l]);
    emu_gate_open(&w->gen);
    L->collectives++;
    pthread_mutex_unlock(&L->mu);
}

static void emu_check_mask(emu_thread *t, unsigned mask, int kind, const char *file, int line) {
    if (mask == EMU_FULL_MASK) return;
    emu_fault_locked(t->L, t, "%s (%s:%d) with mask 0x%08x: the emulator runs full-mask warp collectives only",
                     emu_kind_name[kind], emu_base(file), line, mask);
    emu_unwind_locked(t);
}

void ltx2_emu_syncwarp(unsigned mask, const char *file, int line) {
    emu_thread *t = emu_enter("__syncwarp");
    emu_check_mask(t, mask, K_SYNCWARP, file, line);
    emu_warp_op(t, K_SYNCWARP, file, line);
}

uint64_t ltx2_emu_shfl_xor(unsigned mask, uint64_t bits, int lane_mask, int width, const char *file, int line) {
    emu_thread *t = emu_enter("__shfl_xor_sync");
    emu_check_mask(t, mask, K_SHFL, file, line);
    if (width < 1 || width > EMU_WARP || (width & (width - 1))) {
        emu_fault_locked(t->L, t, "__shfl_xor_sync (%s:%d): width %d is not a power of two <= 32", emu_base(file),
                         line, width);
        emu_unwind_locked(t);
    }
    t->bits = bits;
    t->imm = lane_mask;
    t->width = width;
    emu_warp_op(t, K_SHFL, file, line);
    return t->out;
}

void ltx2_emu_ldmatrix_x4(uint32_t r[4], const void *row, int trans, const char *file, int line) {
    emu_thread *t = emu_enter("ldmatrix");
    t->addr = row;
    emu_warp_op(t, trans ? K_LDMATRIX_T : K_LDMATRIX, file, line);
    memcpy(r, t->r, sizeof t->r);
}

void ltx2_emu_mma_bf16_m16n8k16(float d[4], const uint32_t a[4], uint32_t b0, uint32_t b1, const char *file,
                                int line) {
    emu_thread *t = emu_enter("mma");
    memcpy(t->a, a, sizeof t->a);
    t->b[0] = b0;
    t->b[1] = b1;
    memcpy(t->c, d, sizeof t->c);
    emu_warp_op(t, K_MMA, file, line);
    memcpy(d, t->d, sizeof t->d);
}

/* ---- cp.async (per thread; no rendezvous) ------------------------------------------------------- */

void ltx2_emu_cp_async16(void *dst, const void *src, int src_bytes, const char *file, int line) {
    emu_thread *t = emu_self("cp.async");
    const char *bad = NULL;
    if (((uintptr_t)dst & 15u) || ((uintptr_t)src & 15u)) bad = "addresses must be 16-byte aligned";
    else if (src_bytes < 0 || src_bytes > 16) bad = "src-size must be 0..16";
    else if (!src) bad = "source address is NULL";
    if (bad) {
        pthread_mutex_lock(&t->L->mu);
        emu_fault_locked(t->L, t, "cp.async (%s:%d) dst %p src %p: %s", emu_base(file), line, dst, src, bad);
        emu_unwind_locked(t);
    }
    if (t->n == t->cap) {
        size_t cap = t->cap ? 2 * t->cap : 64;
        emu_copy *c = realloc(t->copies, cap * sizeof *c);
        if (!c) {
            pthread_mutex_lock(&t->L->mu);
            emu_fault_locked(t->L, t, "cp.async (%s:%d): out of host memory", emu_base(file), line);
            emu_unwind_locked(t);
        }
        t->copies = c;
        t->cap = cap;
    }
    emu_copy *c = &t->copies[t->n++];
    c->dst = dst;
    c->src = src;
    c->src_bytes = src_bytes;
    c->group = t->committed; /* the open group: closed by the next commit */
    c->file = file;
    c->line = line;
    const emu_site site = {t->tid, t->warp, file, line};
    char msg[EMU_MSG_BYTES];
    pthread_mutex_lock(&t->L->mu);
    if (emu_race_copy_issue(t->L->race, dst, site, msg, sizeof msg)) {
        emu_fault_locked(t->L, t, "%s", msg);
        emu_unwind_locked(t);
    }
    pthread_mutex_unlock(&t->L->mu);
}

void ltx2_emu_cp_async_commit(void) { emu_self("cp.async.commit_group")->committed++; }

/* cp.async.wait_group n: every committed group but the n most recent has landed, in order. */
void ltx2_emu_cp_async_wait(int n) {
    emu_thread *t = emu_self("cp.async.wait_group");
    const uint64_t limit = t->committed > (uint64_t)n ? t->committed - (uint64_t)n : 0;
    pthread_mutex_lock(&t->L->mu);
    while (t->head < t->n && t->copies[t->head].group < limit) {
        const emu_copy *c = &t->copies[t->head++];
        const emu_site site = {t->tid, t->warp, c->file, c->line};
        char msg[EMU_MSG_BYTES];
        if (emu_race_copy_land(t->L->race, c->dst, site, msg, sizeof msg)) {
            emu_fault_locked(t->L, t, "%s", msg);
            emu_unwind_locked(t);
        }
        if (c->src_bytes) memcpy(c->dst, c->src, (size_t)c->src_bytes);
        memset((unsigned char *)c->dst + c->src_bytes, 0, (size_t)(16 - c->src_bytes));
    }
    pthread_mutex_unlock(&t->L->mu);
    if (t->head == t->n) t->head = t->n = 0;
}

void *ltx2_emu_dyn_smem(void) { return emu_self("dynamic shared memory")->L->dyn; }

/* ---- threads and launch ------------------------------------------------------------------------- */

/* A thread leaves the block: returned from the kernel, or unwound by a fault. */
static void emu_thread_exit(emu_thread *t, int unwound) {
    emu_launch *L = t->L;
    pthread_mutex_lock(&L->mu);
    if (!unwound && !L->fault) emu_sm90_handoff_done(L, t);
    t->state = S_EXITED;
    if (!unwound && !L->fault) emu_sm90_thread_exit(L, t);
    if (!unwound && !L->fault) {
        emu_warp *w = &L->warps[t->warp];
        L->live--;
        w->exited |= 1u << t->lane;
        if (w->arrived) {
            char lanes[128];
            uint32_t waiting = 0;
            for (int l = 0; l < EMU_WARP; l++)
                if (L->threads[t->warp * EMU_WARP + l].state == S_WAITING) waiting |= 1u << l;
            emu_lanes_str(waiting, lanes, sizeof lanes);
            emu_fault_locked(L, t, "lane returned while lanes %s of warp %d wait for it at full-mask %s (%s:%d)", lanes,
                             t->warp, emu_kind_name[w->kind], emu_base(w->file), w->line);
        } else if (L->bar_arrived && L->bar_arrived == L->live) {
            emu_complete_barrier_locked(L, NULL); /* exited threads no longer count */
        } else if (L->live && L->blocked == L->live) {
            emu_deadlock_locked(L);
        }
    }
    ++L->finished;
    pthread_mutex_unlock(&L->mu);
}

/* A fiber's life: one block of one CUDA thread, from the kernel entry to its return (or a fault's
 * unwind), then back to the scheduler for good. makecontext passes ints: the thread's index. */
static void emu_fiber_main(int tid) {
    emu_launch *L = emu_fiber_launch;
    emu_thread *t = &L->threads[tid];
#ifdef EMU_ASAN
    __sanitizer_finish_switch_fiber(NULL, &L->sched_stack, &L->sched_stack_size);
#endif
#ifdef EMU_TSAN
    __tsan_acquire(&L->block_idx); /* the launcher's setup of this block happened before */
#endif
    t->bi.block_idx = L->block_idx;
    t->head = t->n = 0; /* copies never waited for in the last block never land */
    t->committed = 0;
    if (setjmp(t->jb) == 0) {
        L->body(L->closure);
        emu_thread_exit(t, 0);
    } else {
        emu_thread_exit(t, 1);
    }
    emu_yield(t, true);
}

static pthread_mutex_t emu_launch_mu = PTHREAD_MUTEX_INITIALIZER; /* held for a whole launch */

/* Reserves the stacks once (address space only: pages are touched as fibers use them). */
static bool emu_stacks_ready(void) {
    if (emu_stack_base) return true;
    void *p = mmap(NULL, (size_t)EMU_MAX_BLOCK_THREADS * EMU_STACK_BYTES, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) return false;
    emu_stack_base = p;
    return true;
}

static int emu_check_config(ltx2_emu_dim3 grid, ltx2_emu_dim3 block, size_t dyn) {
    const uint64_t threads = (uint64_t)block.x * block.y * block.z;
    if (threads == 0 || threads > EMU_MAX_BLOCK_THREADS || block.z > EMU_MAX_BLOCK_Z)
        return LTX2_EMU_ERR_INVALID_CONFIGURATION;
    if (grid.x == 0 || grid.y == 0 || grid.z == 0 || grid.x > EMU_MAX_GRID_X || grid.y > EMU_MAX_GRID_YZ ||
        grid.z > EMU_MAX_GRID_YZ)
        return LTX2_EMU_ERR_INVALID_CONFIGURATION;
    if (dyn > EMU_MAX_DYN_SMEM) return LTX2_EMU_ERR_INVALID_VALUE;
    return 0;
}

/* A fresh fiber per thread at its kernel entry. Out of line: getcontext returns twice as far as the
 * compiler knows, which would spoil the caller's locals (it never does here: the saved context is
 * only the template makecontext rewrites). */
__attribute__((noinline)) static void emu_fibers_make(emu_launch *L) {
    for (int i = 0; i < L->nthreads; i++) {
        emu_thread *t = &L->threads[i];
        getcontext(&t->uc);
        t->uc.uc_stack.ss_sp = t->stack;
        t->uc.uc_stack.ss_size = EMU_STACK_BYTES;
        t->uc.uc_link = NULL; /* fibers never return: they switch back for good */
        makecontext(&t->uc, (void (*)(void))emu_fiber_main, 1, i);
    }
}

/* Runs one block with the launch's threads; returns 0, or 1 when it faulted. */
static int emu_run_block(emu_launch *L, ltx2_emu_dim3 idx) {
    unsigned char *dyn = NULL;
    if (L->dyn_bytes) {
        void *p = NULL;
        if (posix_memalign(&p, EMU_SMEM_ALIGN, L->dyn_bytes) != 0) return -1;
        dyn = p;
        memset(dyn, EMU_SMEM_FILL, L->dyn_bytes);
    }
    pthread_mutex_lock(&L->mu);
    emu_race_block_start(L->race);
    L->block_idx = idx;
    L->dyn = dyn;
    L->live = L->nthreads;
    L->blocked = L->finished = 0;
    emu_sm90_block_start(L);
    L->bar_kind = K_NONE;
    L->bar_arrived = L->bar_or = 0;
    for (int w = 0; w < L->nwarps; w++) {
        L->warps[w].kind = K_NONE;
        L->warps[w].arrived = 0;
        L->warps[w].exited = 0;
    }
    for (int i = 0; i < L->nthreads; i++) {
        L->threads[i].state = S_RUNNING;
        L->threads[i].wake = W_NONE;
    }
    pthread_mutex_unlock(&L->mu);
    emu_fibers_make(L);
#ifdef EMU_TSAN
    __tsan_release(&L->block_idx); /* each fiber acquires it when it starts (the switches do not sync) */
#endif
    /* the scheduler: resume runnable fibers until every one has finished; a thread is runnable when
     * it has not exited and nothing holds it at a collective. It always resumes the lowest runnable
     * thread (on odd blocks the highest), so the first (last) warps run as far ahead of the others
     * as the kernel's synchronisation lets them: an access that a missing barrier leaves unordered
     * then really happens early, and ThreadSanitizer sees it. */
    const bool up = ((idx.x ^ idx.y ^ idx.z) & 1u) == 0;
    for (;;) {
        pthread_mutex_lock(&L->mu);
        const int finished = L->finished;
        int pick = -1;
        for (int k = 0; k < L->nthreads && finished < L->nthreads; k++) {
            const int i = up ? k : L->nthreads - 1 - k;
            if (L->threads[i].state == S_RUNNING) {
                pick = i;
                break;
            }
        }
        if (finished < L->nthreads && pick < 0) /* every blocking path checks this; belt and braces */
            emu_fault_locked(L, NULL, "scheduler: no thread can run and %d have not finished", L->nthreads - finished);
        pthread_mutex_unlock(&L->mu);
        if (finished == L->nthreads) break;
        if (pick < 0) continue; /* the fault made every waiter runnable */
        emu_thread *t = &L->threads[pick];
        emu_switch(&L->sched, &t->uc, t->stack, EMU_STACK_BYTES, t->tsan_fiber, false);
    }
    pthread_mutex_lock(&L->mu);
    const int fault = L->fault;
    L->dyn = NULL;
    pthread_mutex_unlock(&L->mu);
    free(dyn);
    return fault;
}

static int emu_fail(int err) {
    emu_last_error = err;
    return err;
}

int ltx2_emu_launch(const char *kernel, ltx2_emu_dim3 grid, ltx2_emu_dim3 block, size_t dyn_smem,
                    ltx2_emu_body body, void *closure) {
    const int cfg = emu_check_config(grid, block, dyn_smem);
    if (cfg) return emu_fail(cfg);
    emu_launch *L = calloc(1, sizeof *L);
    if (!L) return emu_fail(EMU_ERR_OUT_OF_RESOURCES);
    emu_kernel_name(kernel, L->name, sizeof L->name);
    L->grid = grid;
    L->block = block;
    L->dyn_bytes = dyn_smem;
    L->body = body;
    L->closure = closure;
    L->nthreads = (int)(block.x * block.y * block.z);
    L->nwarps = (L->nthreads + EMU_WARP - 1) / EMU_WARP;
    L->threads = calloc((size_t)L->nthreads, sizeof *L->threads);
    L->warps = calloc((size_t)L->nwarps, sizeof *L->warps);
    L->race = emu_race_create();
    if (!L->threads || !L->warps || !L->race) {
        free(L->threads);
        free(L->warps);
        emu_race_free(L->race);
        free(L);
        return emu_fail(EMU_ERR_OUT_OF_RESOURCES);
    }
    pthread_mutex_init(&L->mu, NULL);
    for (int w = 0; w < L->nwarps; w++)
        L->warps[w].lanes = L->nthreads - w * EMU_WARP < EMU_WARP ? L->nthreads - w * EMU_WARP : EMU_WARP;

    for (int i = 0; i < L->nthreads; i++) {
        emu_thread *t = &L->threads[i];
        const unsigned tid = (unsigned)i;
        t->L = L;
        t->tid = i;
        t->warp = i / EMU_WARP;
        t->lane = i % EMU_WARP;
        t->bi.thread_idx.x = tid % block.x;
        t->bi.thread_idx.y = tid / block.x % block.y;
        t->bi.thread_idx.z = tid / (block.x * block.y);
        t->bi.block_dim = block;
        t->bi.grid_dim = grid;
    }
    pthread_mutex_lock(&emu_launch_mu);
    int err = emu_stacks_ready() ? 0 : EMU_ERR_OUT_OF_RESOURCES;
    emu_fiber_launch = L;
#ifdef EMU_TSAN
    L->sched_tsan_fiber = __tsan_get_current_fiber();
#endif
    for (int i = 0; !err && i < L->nthreads; i++) {
        L->threads[i].stack = emu_stack_base + (size_t)i * EMU_STACK_BYTES;
#ifdef EMU_TSAN
        L->threads[i].tsan_fiber = __tsan_create_fiber(0); /* one per thread for the whole launch */
#endif
    }

    int fault = 0;
    for (unsigned z = 0; !err && !fault && z < grid.z; z++)
        for (unsigned y = 0; !err && !fault && y < grid.y; y++)
            for (unsigned x = 0; !err && !fault && x < grid.x; x++) {
                const ltx2_emu_dim3 idx = {x, y, z};
                const int r = emu_run_block(L, idx);
                if (r < 0) err = EMU_ERR_OUT_OF_RESOURCES;
                fault = r > 0;
            }

#ifdef EMU_TSAN
    for (int i = 0; !err && i < L->nthreads; i++) __tsan_destroy_fiber(L->threads[i].tsan_fiber);
#endif
    emu_fiber_launch = NULL;
    pthread_mutex_unlock(&emu_launch_mu);
    for (int i = 0; i < L->nthreads; i++) free(L->threads[i].copies);
    pthread_mutex_lock(&emu_global_mu);
    emu_collectives_total += L->collectives;
    pthread_mutex_unlock(&emu_global_mu);
    pthread_mutex_destroy(&L->mu);
    free(L->threads);
    free(L->warps);
    emu_race_free(L->race);
    emu_sm90_free(L);
    free(L);
    if (err) return emu_fail(err);
    return fault ? emu_fail(LTX2_EMU_ERR_LAUNCH_FAILURE) : 0;
}

int ltx2_emu_get_last_error(void) {
    const int e = emu_last_error;
    emu_last_error = 0;
    return e;
}

const char *ltx2_emu_last_fault(void) {
    pthread_mutex_lock(&emu_global_mu);
    const char *r = emu_has_fault ? emu_fault_msg : NULL;
    pthread_mutex_unlock(&emu_global_mu);
    return r;
}

void ltx2_emu_reset_fault(void) {
    pthread_mutex_lock(&emu_global_mu);
    emu_has_fault = 0;
    emu_fault_msg[0] = 0;
    pthread_mutex_unlock(&emu_global_mu);
}

uint64_t ltx2_emu_collectives(void) {
    pthread_mutex_lock(&emu_global_mu);
    const uint64_t n = emu_collectives_total;
    pthread_mutex_unlock(&emu_global_mu);
    return n;
}
