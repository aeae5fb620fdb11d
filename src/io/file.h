/* Small file-system helpers shared by the io readers and writers: read a whole file, map one
 * read-only, write through a temp file that is renamed into place (so a failed write never leaves
 * a half file behind), join paths, test for directories, list a directory in sorted order. */
#ifndef LTX2_IO_FILE_H
#define LTX2_IO_FILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ltx2/ltx2.h"

/* Reads the whole file into a malloc'd buffer with one extra NUL byte after the data (so text
 * files can be used as C strings). *out is freed by the caller with free(). */
ltx2_status ltx2_file_read_all(ltx2_context *ctx, const char *path, char **out, size_t *size);

/* A read-only private mapping of a whole file. An empty file gives data == NULL, size == 0. */
typedef struct ltx2_file_map {
    const void *data;
    size_t size;
} ltx2_file_map;
ltx2_status ltx2_file_map_open(ltx2_context *ctx, const char *path, ltx2_file_map *out);
void ltx2_file_map_close(ltx2_file_map *m);

/* Writes `path.tmp.<pid>` and renames it to `path` on commit. Any failure, or abort, removes the
 * temp file. After commit or abort the writer is empty and may be discarded. */
typedef struct ltx2_file_writer {
    int fd;
    char *path;
    char *tmp_path;
    uint64_t written;
} ltx2_file_writer;
/* The temp name a write goes to before its rename: "<path>.tmp.<pid>.<thread>", unique to the
 * writing thread, so ranks running as threads of one process can write the same output at once
 * (each rename lands a whole file). LTX2_TMP_SUFFIX_CAP bytes hold the suffix. */
#define LTX2_TMP_SUFFIX_CAP 64
void ltx2_tmp_path(char *buf, size_t cap, const char *path);
ltx2_status ltx2_file_writer_open(ltx2_context *ctx, const char *path, ltx2_file_writer *w);
/* On failure the temp file is already removed; the caller only reports. */
ltx2_status ltx2_file_writer_write(ltx2_context *ctx, ltx2_file_writer *w, const void *data,
                                   size_t n);
/* n zero bytes as a hole (the file is extended, no blocks written where the file system has sparse
 * files): the all-zero tensors of a synthetic checkpoint of real size. */
ltx2_status ltx2_file_writer_zeros(ltx2_context *ctx, ltx2_file_writer *w, uint64_t n);
ltx2_status ltx2_file_writer_commit(ltx2_context *ctx, ltx2_file_writer *w);
void ltx2_file_writer_abort(ltx2_file_writer *w);

/* "dir/name" (no doubled '/'); malloc'd, NULL on allocation failure. */
char *ltx2_path_join(const char *dir, const char *name);
/* The directory part of path ("." when it has none); malloc'd. */
char *ltx2_path_dirname(const char *path);
/* The part after the last '/'; points into path. */
const char *ltx2_path_basename(const char *path);
bool ltx2_path_is_dir(const char *path);
bool ltx2_path_is_file(const char *path);
bool ltx2_str_ends_with(const char *s, const char *suffix);

/* Names of the entries of dir (no "." / ".."), sorted with strcmp. Free with
 * ltx2_dir_list_free. */
ltx2_status ltx2_dir_list(ltx2_context *ctx, const char *dir, char ***names, size_t *n);
void ltx2_dir_list_free(char **names, size_t n);

#endif
