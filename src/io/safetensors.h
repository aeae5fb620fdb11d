/* Safetensors: a validated, mmap'd reader; a writer (temp file + rename, never a half file); and
 * tensor sets spanning several files (diffusers' sharded `*.safetensors.index.json`, or a directory).
 * Validation: header length vs file size, JSON syntax, known dtype, non-negative shape,
 * numel x itemsize == end - begin, offsets inside the data section, no two tensors overlapping.
 * `__metadata__` is kept as string pairs (LTX-2 stores its `config` JSON as one such string).
 * Also refused: duplicate names, unknown keys in an entry, names or metadata containing NUL.
 * Gaps between tensors and bytes after the last one are tolerated (the reference library refuses
 * them; they cannot make us read out of bounds). */
#ifndef LTX2_IO_SAFETENSORS_H
#define LTX2_IO_SAFETENSORS_H

#include <stddef.h>
#include <stdint.h>

#include "io/json.h"
#include "ltx2/ltx2.h"
#include "ltx2/tensor.h"

/* Headers larger than this are refused before any allocation (real LTX-2 headers are ~1-3 MB). */
#define LTX2_ST_MAX_HEADER ((uint64_t)100 << 20)

typedef struct ltx2_st_tensor {
    const char *name;
    ltx2_dtype dtype;
    int ndim;
    int64_t shape[LTX2_MAX_DIMS];
    uint64_t begin, end;  /* byte offsets relative to the data section */
    const void *data;     /* points into the mapping; may be unaligned */
} ltx2_st_tensor;

typedef struct ltx2_st_meta {
    const char *key;
    const char *value;
} ltx2_st_meta;

typedef struct ltx2_st_file {
    char *path;               /* as opened (or the label for in-memory files) */
    uint64_t file_size;
    uint64_t header_len;
    size_t n_tensors;
    ltx2_st_tensor *tensors;  /* sorted by name */
    size_t n_meta;
    ltx2_st_meta *meta;       /* in file order */
    void *impl_;              /* mapping and parsed header, owned */
} ltx2_st_file;

ltx2_status ltx2_st_open(ltx2_context *ctx, const char *path, ltx2_st_file **out);
/* Parses a buffer in place (no copy; buf must outlive the file). For fuzzing and embedded data. */
ltx2_status ltx2_st_open_memory(ltx2_context *ctx, const void *buf, size_t size, const char *label,
                                ltx2_st_file **out);
void ltx2_st_close(ltx2_st_file *f);
/* A reference that keeps f's file mapping, and so the data pointer of every tensor of f, valid
 * after ltx2_st_close(f) (weights that run straight from the file hold one); NULL for a file with
 * no mapping of its own (ltx2_st_open_memory, or NULL). Each retain is released once. */
typedef struct ltx2_st_mapping ltx2_st_mapping;
ltx2_st_mapping *ltx2_st_mapping_retain(const ltx2_st_file *f);
void ltx2_st_mapping_release(ltx2_st_mapping *m);
const ltx2_st_tensor *ltx2_st_find(const ltx2_st_file *f, const char *name);
const char *ltx2_st_meta_get(const ltx2_st_file *f, const char *key);
/* Parses the JSON string stored under metadata `key` (LTX-2 keeps its model config in
 * __metadata__["config"]). A missing key is LTX2_ERR_NOT_FOUND naming the file and `why` it is
 * needed; bad JSON names the file. The caller frees *out. */
ltx2_status ltx2_st_meta_json(ltx2_context *ctx, const ltx2_st_file *f, const char *key, const char *why,
                              ltx2_json_doc **out);
/* A malloc'd, aligned f32 copy of tensor `name` (any float/int dtype converted; the mapping may be
 * unaligned), or NULL with the error recorded (missing tensor, no memory). numel may be NULL. */
float *ltx2_st_read_f32(ltx2_context *ctx, const ltx2_st_file *f, const char *name, int64_t *numel);
/* A malloc'd f32 copy of the 5-D tensor t, stored NCDHW as torch lays out video activations,
 * transposed to NDHWC (the engine's layout); shape_out gets [N, D, H, W, C]. NULL with the error
 * recorded when t is NULL, not 5-D, or not convertible. */
float *ltx2_st_tensor_to_ndhwc(ltx2_context *ctx, const ltx2_st_tensor *t, int64_t shape_out[5]);
/* A CPU view over the mapped bytes (callers must not write through it). */
ltx2_tensor ltx2_st_view(const ltx2_st_tensor *t);

/* Writer: collects tensors (pointers kept until write; data must stay alive) and metadata. */
typedef struct ltx2_st_writer ltx2_st_writer;
ltx2_status ltx2_st_writer_create(ltx2_context *ctx, ltx2_st_writer **out);
/* t must be a contiguous CPU tensor; the name must be unique. A tensor with no data (data NULL) is
 * written as zeros, as a hole in the file (a synthetic checkpoint of real size costs no disk). */
ltx2_status ltx2_st_writer_add(ltx2_context *ctx, ltx2_st_writer *w, const char *name,
                               const ltx2_tensor *t);
ltx2_status ltx2_st_writer_set_meta(ltx2_context *ctx, ltx2_st_writer *w, const char *key,
                                    const char *value);
/* Writes `path.tmp.<pid>` then renames to path; on failure nothing is left behind. The header
 * holds `__metadata__` (when any) then the tensors sorted by name, padded with spaces so the data
 * section starts 8-byte aligned; data is laid out by item size (largest first) then name, with
 * no gaps, so every tensor is naturally aligned (as the reference library does). Names and
 * metadata must be valid UTF-8. */
ltx2_status ltx2_st_writer_write(ltx2_context *ctx, ltx2_st_writer *w, const char *path);
void ltx2_st_writer_free(ltx2_st_writer *w);

/* A set of safetensors files seen as one namespace. `path` may be: a .safetensors file; a
 * `*.safetensors.index.json` (diffusers sharding: weight_map name -> shard file, every shard
 * checked to exist and to hold the names mapped to it); or a directory holding either an index
 * or plain *.safetensors files. Duplicate tensor names across files are an error. */
typedef struct ltx2_st_set {
    size_t n_files;
    ltx2_st_file **files;
    size_t n_tensors;
    const ltx2_st_tensor **tensors;  /* sorted by name across all files */
    const ltx2_st_file **owners;     /* owners[i] holds tensors[i] */
    char *index_path;                /* the index json when one was used, else NULL */
} ltx2_st_set;

ltx2_status ltx2_st_set_open(ltx2_context *ctx, const char *path, ltx2_st_set **out);
void ltx2_st_set_close(ltx2_st_set *s);
const ltx2_st_tensor *ltx2_st_set_find(const ltx2_st_set *s, const char *name,
                                       const ltx2_st_file **owner);
/* A file view over every tensor of the set (one sorted namespace, no metadata), for loaders that
 * read one ltx2_st_file; it borrows the set's mappings (close the view before the set). */
ltx2_status ltx2_st_set_view(ltx2_context *ctx, const ltx2_st_set *s, const char *label, ltx2_st_file *view);
void ltx2_st_set_view_close(ltx2_st_file *view);

#endif
