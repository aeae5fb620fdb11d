/* Communicators for multi-rank execution: a device mesh with MaxDiffusion's axis names
 * (data, fsdp, context, tensor), and one collective interface (an op table) implemented by an
 * in-process loopback backend (P virtual ranks as threads; tests, CPU), by NCCL (GPUs) and by a
 * null backend that moves nothing (the memory planner).
 *
 * Semantics follow NCCL, counts are in elements, buffers are f32 or bf16:
 *   all_gather     send[count]          -> recv[size*count], block r from rank r
 *   reduce_scatter send[size*count]     -> recv[count] = sum over ranks of their block `rank`
 *   all_reduce     send[count]          -> recv[count] = sum over ranks
 *   all_to_all     send[size*count]     -> recv[size*count]; send block j goes to rank j and
 *                                          lands in its recv block `rank`
 *   broadcast      root's send[count]   -> every rank's recv[count] (send ignored off-root)
 *   barrier        returns once every rank of the communicator has entered it
 * Every rank of a communicator must call the same collectives in the same order with the same
 * count, dtype and root; a mismatch is reported (loopback) instead of corrupting data.
 * Buffers are host memory for the loopback backend; NCCL takes device memory (asynchronous, ordered
 * with the compute stream) or host memory (staged through device scratch, complete on return).
 *
 * Failure model: a rank that fails calls ltx2_comm_abort(reason); every rank blocked in (or later
 * entering) a collective of that world returns LTX2_ERR_DEVICE with the reason, never hangs. A
 * rank that waits longer than the world's timeout aborts the world itself. */
#ifndef LTX2_DIST_COMM_H
#define LTX2_DIST_COMM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ltx2/ltx2.h"
#include "ltx2/tensor.h"

/* Mesh axes in MaxDiffusion's order (configs/ltx2_video.yml:76 `mesh_axes`). */
typedef enum ltx2_mesh_axis {
    LTX2_AXIS_DATA = 0,
    LTX2_AXIS_FSDP,
    LTX2_AXIS_CONTEXT,
    LTX2_AXIS_TENSOR,
    LTX2_AXIS_COUNT
} ltx2_mesh_axis;

#define LTX2_AXIS_BIT(a) (1u << (unsigned)(a))
#define LTX2_AXIS_ALL ((1u << LTX2_AXIS_COUNT) - 1u)

/* Sizes per axis (each >= 1). Ranks are laid out row-major over (data, fsdp, context, tensor),
 * tensor fastest, so a tensor group is a run of consecutive ranks (NVLink-local first). */
typedef struct ltx2_mesh {
    int size[LTX2_AXIS_COUNT];
} ltx2_mesh;

/* Refuse meshes beyond this many ranks: far above any single job we target, and it keeps
 * products of sizes comfortably inside int. */
#define LTX2_MESH_MAX_RANKS 65536

const char *ltx2_mesh_axis_name(ltx2_mesh_axis a); /* "data", "fsdp", "context", "tensor" */
ltx2_status ltx2_mesh_init(ltx2_context *ctx, ltx2_mesh *m, int data, int fsdp, int context, int tensor);
/* "d,f,c,t", e.g. "1,1,8,1". */
ltx2_status ltx2_mesh_parse(ltx2_context *ctx, const char *text, ltx2_mesh *out);
int ltx2_mesh_world_size(const ltx2_mesh *m);
void ltx2_mesh_coords(const ltx2_mesh *m, int rank, int coords[LTX2_AXIS_COUNT]);
int ltx2_mesh_rank(const ltx2_mesh *m, const int coords[LTX2_AXIS_COUNT]);
/* Product of the sizes of the axes in mask. */
int ltx2_mesh_axes_size(const ltx2_mesh *m, unsigned axis_mask);

typedef struct ltx2_comm ltx2_comm;

/* One backend's implementation. Wrappers below validate arguments, then call these. */
typedef struct ltx2_comm_ops {
    const char *name;
    /* The collectives take device buffers (NCCL); false: host memory only (loopback), so a caller
     * with device buffers copies them through the host (ltx2_comm_takes_device). */
    bool device_memory;
    ltx2_status (*all_gather)(ltx2_comm *c, ltx2_context *ctx, const void *send, void *recv,
                              size_t count, ltx2_dtype dt);
    ltx2_status (*reduce_scatter)(ltx2_comm *c, ltx2_context *ctx, const void *send, void *recv,
                                  size_t count, ltx2_dtype dt);
    ltx2_status (*all_reduce)(ltx2_comm *c, ltx2_context *ctx, const void *send, void *recv,
                              size_t count, ltx2_dtype dt);
    ltx2_status (*all_to_all)(ltx2_comm *c, ltx2_context *ctx, const void *send, void *recv,
                              size_t count, ltx2_dtype dt);
    ltx2_status (*broadcast)(ltx2_comm *c, ltx2_context *ctx, const void *send, void *recv,
                             size_t count, ltx2_dtype dt, int root);
    ltx2_status (*barrier)(ltx2_comm *c, ltx2_context *ctx);
    /* Collective over c: ranks with equal color form one new communicator, ordered by key then
     * by rank in c; color < 0 gives *out = NULL. `mesh` is the new communicator's mesh. */
    ltx2_status (*split)(ltx2_comm *c, ltx2_context *ctx, int color, int key, const ltx2_mesh *mesh,
                         ltx2_comm **out);
    void (*abort)(ltx2_comm *c, const char *reason);
    void (*free)(ltx2_comm *c);
} ltx2_comm_ops;

struct ltx2_comm {
    const ltx2_comm_ops *ops;
    int rank, size;
    ltx2_mesh mesh; /* this communicator's mesh: size == ltx2_mesh_world_size(&mesh) */
    char label[32]; /* "world", "context", "fsdp+context", ... for messages */
    void *impl;
};

/* Only f32 and bf16 buffers are accepted (sums of bf16 accumulate in f32 on the loopback backend
 * and round once; NCCL's bf16 sums round per step, so bf16 results are not bitwise across backends). */
ltx2_status ltx2_comm_all_gather(ltx2_comm *c, ltx2_context *ctx, const void *send, void *recv,
                                 size_t count, ltx2_dtype dt);
ltx2_status ltx2_comm_reduce_scatter(ltx2_comm *c, ltx2_context *ctx, const void *send, void *recv,
                                     size_t count, ltx2_dtype dt);
ltx2_status ltx2_comm_all_reduce(ltx2_comm *c, ltx2_context *ctx, const void *send, void *recv,
                                 size_t count, ltx2_dtype dt);
ltx2_status ltx2_comm_all_to_all(ltx2_comm *c, ltx2_context *ctx, const void *send, void *recv,
                                 size_t count, ltx2_dtype dt);
ltx2_status ltx2_comm_broadcast(ltx2_comm *c, ltx2_context *ctx, const void *send, void *recv,
                                size_t count, ltx2_dtype dt, int root);
ltx2_status ltx2_comm_barrier(ltx2_comm *c, ltx2_context *ctx);
/* Collective: rank 0's string `text` (NULL there: none; ignored elsewhere) to every rank as a
 * malloc'd copy in *out (NULL for none or an empty one). The bytes travel inside f32 words, moved,
 * never computed on; at most LTX2_COMM_TEXT_MAX bytes (the length crosses as an exact float). */
#define LTX2_COMM_TEXT_MAX (((size_t)1 << 24) - 1)
ltx2_status ltx2_comm_broadcast_text(ltx2_comm *c, ltx2_context *ctx, const char *text, char **out);
/* Collective: ltx2_comm_broadcast of buf[count] from root into every rank's buf, in pieces of at
 * most LTX2_COMM_CHUNK elements, so a communicator that stages host memory through device scratch
 * (NCCL) never holds more than a piece's scratch for a large host buffer (prompt hidden states). */
#define LTX2_COMM_CHUNK ((size_t)1 << 22)
ltx2_status ltx2_comm_broadcast_chunked(ltx2_comm *c, ltx2_context *ctx, void *buf, size_t count, ltx2_dtype dt,
                                        int root);
/* Collective: how many ranks of c (this one included) pass a key equal, byte for byte, to this
 * rank's; every rank passes nbytes (at most LTX2_COMM_KEY_MAX). The keys travel inside f32 words,
 * moved, never computed on. (Which ranks share a GPU: its UUID as the key.) */
#define LTX2_COMM_KEY_MAX 64
ltx2_status ltx2_comm_count_equal(ltx2_comm *c, ltx2_context *ctx, const void *key, size_t nbytes, int *count);
/* Collective over c: the sub-communicator of the ranks that share every coordinate outside
 * axis_mask (so it spans exactly the axes in axis_mask), ranked row-major over those axes.
 * E.g. LTX2_AXIS_BIT(LTX2_AXIS_CONTEXT) gives the sequence-parallel group of this rank, and
 * BIT(CONTEXT)|BIT(FSDP) the group MaxDiffusion's `embed` rule splits weights over. */
ltx2_status ltx2_comm_split_axes(ltx2_comm *c, ltx2_context *ctx, unsigned axis_mask, ltx2_comm **out);
void ltx2_comm_abort(ltx2_comm *c, const char *reason);
void ltx2_comm_free(ltx2_comm *c);
/* Whether c's collectives accept device memory (see ltx2_comm_ops.device_memory). */
static inline bool ltx2_comm_takes_device(const ltx2_comm *c) { return c->ops->device_memory; }

/* ---- loopback backend (comm_loopback.c): P ranks as threads of one process ---- */

/* Generous for tests on a loaded 2-core machine; real deadlocks still end in about a minute. */
#define LTX2_LOOPBACK_DEFAULT_TIMEOUT_MS 60000

typedef struct ltx2_loopback_world ltx2_loopback_world;
/* All shared state of one loopback job lives here. timeout_ms <= 0 selects the default. */
ltx2_status ltx2_loopback_world_create(ltx2_context *ctx, const ltx2_mesh *mesh, int timeout_ms,
                                       ltx2_loopback_world **out);
/* The world communicator handle of one rank; each rank (thread) uses only its own handle. */
ltx2_status ltx2_loopback_comm(ltx2_context *ctx, ltx2_loopback_world *w, int rank, ltx2_comm **out);
/* Aborts the world from outside its ranks (a launcher whose rank thread did not start): every rank
 * waiting in, or later entering, a collective fails with reason. */
void ltx2_loopback_world_abort(ltx2_loopback_world *w, const char *reason);
/* After every rank's thread has finished; frees all sub-communicator state too. Handles returned
 * by ltx2_loopback_comm / split must be freed (ltx2_comm_free) before or after, not used after. */
void ltx2_loopback_world_free(ltx2_loopback_world *w);

/* ---- null backend (comm_null.c): a rank that exchanges nothing ---- */

/* Rank `rank` of `mesh` whose collectives return at once, recv untouched (any memory accepted):
 * for running one rank's code where no value is read (the memory planner's ranks, one after
 * another on a planning backend). */
ltx2_status ltx2_comm_null(ltx2_context *ctx, const ltx2_mesh *mesh, int rank, ltx2_comm **out);

/* ---- NCCL backend (comm_nccl.c), built when LTX2_HAVE_NCCL ---- */

#define LTX2_NCCL_UNIQUE_ID_BYTES 128
/* Overridden by LTX2_NCCL_TIMEOUT_MS in the environment. */
#define LTX2_NCCL_DEFAULT_TIMEOUT_MS 600000

/* Rank 0 makes an id and passes it to the others out of band. With NCCL_COMM_ID=host:port set
 * on every rank, each rank can call this itself and gets the same id (no exchange needed). */
ltx2_status ltx2_comm_nccl_unique_id(ltx2_context *ctx, unsigned char id[LTX2_NCCL_UNIQUE_ID_BYTES]);
/* One rank of a world of ltx2_mesh_world_size(mesh) ranks on CUDA device `device`.
 * Without NCCL in the build: LTX2_ERR_UNSUPPORTED. */
ltx2_status ltx2_comm_nccl_init(ltx2_context *ctx, const ltx2_mesh *mesh, int rank, int device,
                                const unsigned char id[LTX2_NCCL_UNIQUE_ID_BYTES], ltx2_comm **out);
/* NCCL before 2.30 refuses two ranks of one communicator on one GPU ("Duplicate GPU detected");
 * 2.30 accepts them when NCCL_MULTI_RANK_GPU_ENABLE=1 is set (run4 of the H100 results saw 2.28
 * refuse). The encoding is ncclGetVersion's: major * 10000 + minor * 100 + patch. */
#define LTX2_NCCL_SHARED_GPU_VERSION 23000
/* The linked NCCL's version in that encoding; 0 without NCCL in the build. */
int ltx2_comm_nccl_version(void);
/* Whether several ranks may share one GPU here: NCCL new enough and the variable set. */
bool ltx2_comm_nccl_can_share_gpu(void);
/* Orders collectives with compute: each collective waits for work already queued on `stream`
 * (a cudaStream_t) and work queued on `stream` afterwards waits for the collective. NULL: the
 * legacy default stream. Collectives run on the communicator's own stream. */
ltx2_status ltx2_comm_nccl_set_stream(ltx2_comm *c, ltx2_context *ctx, void *cuda_stream);

#endif
