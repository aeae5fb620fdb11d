/* Where a generation's models come from, as one namespace of Lightricks names: a single-file
 * checkpoint, a diffusers directory (names.h's view), or a set of split files (one or more
 * components per file, each file's components told by its keys; bare keys get their component's
 * prefix). Every loader then reads `set` as it reads a single file: the DiT and the connectors
 * from set->files[0], the VAEs and the vocoder under "vae." / "audio_vae." / "vocoder.", every
 * config from set->files[0]'s `__metadata__["config"]` (for a diffusers directory and split files
 * an equivalent config assembled from theirs). */
#ifndef LTX2_MODEL_CKPT_SOURCE_H
#define LTX2_MODEL_CKPT_SOURCE_H

#include "io/safetensors.h"
#include "ltx2/ltx2.h"

typedef enum ltx2_ckpt_kind {
    LTX2_CKPT_SINGLE_FILE = 0,
    LTX2_CKPT_DIFFUSERS_DIR,
    LTX2_CKPT_SPLIT_FILES
} ltx2_ckpt_kind;

typedef struct ltx2_ckpt_source ltx2_ckpt_source;

/* paths[0..n): one single file, one diffusers directory, or n >= 1 split files (a file holding only
 * some components is a split file). A component missing from the set, in two files, or without its
 * config section is refused naming the files; nothing heavy is read (headers only).
 * One of the paths may be MaxDiffusion's converted-weights cache (md_weights.h): its DiT then takes
 * the place of the others' DiT (whose config stays; its block count must match), so a TPU run's exact
 * weights run here. The cache alone, or two of them, are refused. */
ltx2_status ltx2_ckpt_source_open(ltx2_context *ctx, const char *const *paths, int n, ltx2_ckpt_source **out);
/* The namespace (valid until close; the models loaded from it may keep pointers into it). */
const ltx2_st_set *ltx2_ckpt_source_set(const ltx2_ckpt_source *s);
ltx2_ckpt_kind ltx2_ckpt_source_kind(const ltx2_ckpt_source *s);
void ltx2_ckpt_source_close(ltx2_ckpt_source *s);

#endif
