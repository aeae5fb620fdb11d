/* Internals of the CPU emulator's runtime shared by emu.c (threads, warp and block collectives,
 * launch) and emu_sm90.c (the sm_90 mechanisms of attention_sm90.cu: the 32-bit shared window,
 * mbarriers, TMA, named barriers and warpgroup wgmma). Not for kernels or tests. Every function
 * marked "Lock held" runs under the block lock (emu_launch.mu). */
#ifndef LTX2_EMU_INTERNAL_H
#define LTX2_EMU_INTERNAL_H

#include "emu.h"
#include "emu_race.h"

#include <pthread.h>
#include <setjmp.h>
#include <stdint.h>
#include <ucontext.h>

#define EMU_WARP 32
#define EMU_FULL_MASK 0xffffffffu
/* Kernel frames are small (a few KB of fragment arrays); ASan's redzones inflate them ~3x. */
#define EMU_STACK_BYTES (512 * 1024)
/* CUDA's limits on a launch: threads per block, blockDim.z, gridDim.y/z, gridDim.x. */
#define EMU_MAX_BLOCK_THREADS 1024
#define EMU_MAX_BLOCK_Z 64
#define EMU_MAX_GRID_YZ 65535u
#define EMU_MAX_GRID_X 2147483647u
/* sm_90's opt-in maximum of dynamic shared memory per block (227 KB). */
#define EMU_MAX_DYN_SMEM 232448u
/* Dynamic shared memory starts filled with 0xFF bytes: NaN as f32 and bf16, so reading memory
 * nothing wrote shows up in the results. */
#define EMU_SMEM_FILL 0xFF
#define EMU_SMEM_ALIGN 128
#define EMU_MSG_BYTES 4096
#define EMU_NAME_BYTES 256
/* cudaErrorLaunchOutOfResources: the host could not make the block's thread stacks. */
#define EMU_ERR_OUT_OF_RESOURCES 701

/* What a waiting thread waits at. Kinds from K_FIRST_OWN_GATE on (emu_sm90.c) sleep on the
 * thread's own gate word; K_HANDOFF is not a collective (see emu_thread.handoff_pending). */
enum emu_kind {
    K_NONE, K_SYNCTHREADS, K_SYNCTHREADS_OR, K_SYNCWARP, K_SHFL, K_LDMATRIX, K_LDMATRIX_T, K_MMA,
    K_MBAR_WAIT, K_BAR_NAMED, K_SETMAXNREG, K_WG_FENCE, K_WG_COMMIT, K_WG_WAIT, K_WG_MMA, K_HANDOFF
};
#define K_FIRST_OWN_GATE K_MBAR_WAIT
extern const char *const emu_kind_name[];

enum emu_state { S_IDLE, S_RUNNING, S_WAITING, S_EXITED };
enum emu_wake { W_NONE, W_RELEASED, W_UNWIND };

typedef struct emu_copy {
    void *dst;
    const void *src;
    int src_bytes;
    uint64_t group;
    const char *file; /* the cp.async call site */
    int line;
} emu_copy;

struct emu_launch;

typedef struct emu_thread {
    ucontext_t uc;    /* the fiber this CUDA thread runs on (emu.c) */
    void *stack;      /* its stack, EMU_STACK_BYTES */
    void *tsan_fiber; /* ThreadSanitizer's handle for it (NULL otherwise) */
    ltx2_emu_builtins bi;
    struct emu_launch *L;
    int tid, warp, lane;
    jmp_buf jb;
    int state, wake;
    /* where it waits (S_WAITING) */
    int kind;
    const char *file;
    int line;
    /* operands and results of its current collective */
    uint64_t bits, out;
    int imm, width;
    const void *addr;
    uint32_t a[4], b[2], r[4];
    float c[4], d[4];
    /* cp.async: copies[head..n) are issued and not landed; committed groups so far */
    emu_copy *copies;
    size_t head, n, cap;
    uint64_t committed;
    /* sm_90 (emu_sm90.c): the gate this thread sleeps on at K_FIRST_OWN_GATE kinds, what it
     * waits for (printed in deadlock reports), its operands of warpgroup collectives */
    uint32_t gate;
    char detail[96];
    uint32_t wait_bar, wait_parity;
    int named_id, named_count;
    uint64_t wg_da, wg_db;
    float *wg_d;
    const uint32_t *wg_a;
    int wg_imm[7];
    /* Released by an mbarrier phase that `handoff_owner` completed: the owner waits (K_HANDOFF)
     * until each thread it released has blocked again or exited (handoff_pending of them left). */
    struct emu_thread *handoff_owner;
    int handoff_pending;
} emu_thread;

typedef struct emu_warp {
    uint32_t gen; /* bumped when a collective completes (or the block faults): waiters sleep on it */
    int kind, arrived, lanes;
    uint32_t exited; /* lane bit set: that lane returned */
    const char *file;
    int line;
} emu_warp;

typedef struct emu_launch {
    char name[EMU_NAME_BYTES];
    ltx2_emu_dim3 grid, block;
    size_t dyn_bytes;
    ltx2_emu_body body;
    void *closure;
    int nthreads, nwarps;
    emu_thread *threads;
    emu_warp *warps;
    pthread_mutex_t mu;
    ucontext_t sched;         /* the launching thread's scheduler loop, which resumes the fibers */
    void *sched_tsan_fiber;   /* ThreadSanitizer's handle for the launching thread */
    const void *sched_stack;  /* the scheduler's stack, for AddressSanitizer's fiber switches */
    size_t sched_stack_size;
    /* the running block */
    ltx2_emu_dim3 block_idx;
    unsigned char *dyn;
    int live, blocked, finished;
    int bar_kind, bar_arrived, bar_or;
    uint32_t bar_gen;
    int fault;
    uint64_t collectives;
    emu_race *race; /* cp.async / ldmatrix hazards of the running block */
    struct emu_sm90 *sm90; /* emu_sm90.c: shared window, mbarriers, named barriers, warpgroups */
} emu_launch;

/* ---- emu.c helpers ---- */
const char *emu_base(const char *path);
void emu_cat(char *buf, size_t cap, const char *fmt, ...);
/* Records the launch's first fault and wakes every waiting thread to unwind. Lock held. */
void emu_fault_locked(emu_launch *L, const emu_thread *t, const char *fmt, ...);
/* Releases the lock and unwinds the calling thread to its entry. */
#if defined(__GNUC__)
__attribute__((noreturn))
#endif
void emu_unwind_locked(emu_thread *t);
emu_thread *emu_self(const char *what);
/* Takes the block lock; unwinds when the block has faulted. */
emu_thread *emu_enter(const char *what);
/* Parks t (lock held, released here) until released; a deadlock fault when it was the last
 * thread that could run. */
void emu_block(emu_thread *t, int kind, const char *file, int line);
/* Marks a waiting thread released (lock held); kinds >= K_FIRST_OWN_GATE also get their gate opened. */
void emu_release_locked(emu_launch *L, emu_thread *w);
void emu_gate_open(uint32_t *gate);

/* ---- emu_sm90.c hooks ---- */
/* A new block starts (lock held): no barriers, no objects, no operations in flight. */
void emu_sm90_block_start(emu_launch *L);
/* t is about to block or exit (lock held): ends the handoff that released it. */
void emu_sm90_handoff_done(emu_launch *L, emu_thread *t);
/* t returned from the kernel (lock held, no fault yet): warpgroup checks. */
void emu_sm90_thread_exit(emu_launch *L, emu_thread *t);
void emu_sm90_free(emu_launch *L);

#endif
