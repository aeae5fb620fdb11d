/* Prompt hidden states cached on disk, so a repeated prompt skips Gemma: one prompt-embeds file
 * (what --prompt-embeds reads) per key, key = SHA-256 of the prompt, the token length and the
 * encoder's fingerprint. The fingerprint covers config.json and tokenizer.model whole, and of each
 * weight file its name, size, modification time, safetensors header and a 4 KiB sample every
 * 16 MiB: hashing all of a 24 GB encoder per run would cost more than running it on a GPU, and a
 * file changed in place changes its time. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/sha256.h"
#include "io/file.h"
#include "pipeline/pipeline.h"

#define CACHE_VERSION "ltx2c text cache v1"
#define SAMPLE_BYTES 4096
#define SAMPLE_STRIDE ((int64_t)16 << 20)
/* The safetensors header is 8 length bytes then the JSON; cap what is hashed of it. */
#define HEADER_CAP ((uint64_t)64 << 20)

static void hash_u64(ltx2_sha256 *s, uint64_t v) { ltx2_sha256_update(s, &v, sizeof v); }

/* A whole small file into the hash (its size first). */
static ltx2_status hash_file(ltx2_context *ctx, ltx2_sha256 *s, const char *path) {
    char *buf = NULL;
    size_t n = 0;
    LTX2_TRY(ltx2_file_read_all(ctx, path, &buf, &n));
    hash_u64(s, n);
    ltx2_sha256_update(s, buf, n);
    free(buf);
    return LTX2_OK;
}

/* A weight file: name, size, mtime, header, samples. */
static ltx2_status hash_weights(ltx2_context *ctx, ltx2_sha256 *s, const char *path) {
    FILE *f = fopen(path, "rb");
    struct stat sb;
    if (!f || fstat(fileno(f), &sb) != 0) {
        const int e = errno;
        if (f) fclose(f);
        return LTX2_ERROR(ctx, LTX2_ERR_IO, "text cache: %s: %s", path, strerror(e));
    }
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    ltx2_sha256_update(s, base, strlen(base) + 1);
    hash_u64(s, (uint64_t)sb.st_size);
    hash_u64(s, (uint64_t)sb.st_mtim.tv_sec);
    hash_u64(s, (uint64_t)sb.st_mtim.tv_nsec);
    uint8_t buf[SAMPLE_BYTES];
    uint64_t hlen = 0;
    size_t got = fread(buf, 1, 8, f);
    for (size_t i = 0; i < got; i++) hlen |= (uint64_t)buf[i] << (8 * i);
    ltx2_sha256_update(s, buf, got);
    if (hlen > HEADER_CAP) hlen = HEADER_CAP;
    for (uint64_t left = hlen; left > 0;) {
        const size_t take = left < SAMPLE_BYTES ? (size_t)left : SAMPLE_BYTES;
        const size_t r = fread(buf, 1, take, f);
        if (r == 0) break;
        ltx2_sha256_update(s, buf, r);
        left -= r;
    }
    for (int64_t off = 0; off < (int64_t)sb.st_size; off += SAMPLE_STRIDE) {
        if (fseeko(f, (off_t)off, SEEK_SET) != 0) break;
        const size_t r = fread(buf, 1, SAMPLE_BYTES, f);
        ltx2_sha256_update(s, buf, r);
    }
    fclose(f);
    return LTX2_OK;
}

ltx2_status ltx2_text_cache_open(ltx2_context *ctx, const char *cache_dir, const char *encoder_dir, const char *variant,
                                 ltx2_text_cache *out) {
    memset(out, 0, sizeof *out);
    if (snprintf(out->dir, sizeof out->dir, "%s", cache_dir) >= (int)sizeof out->dir)
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "text cache: directory name too long: %s", cache_dir);
    ltx2_sha256 s;
    ltx2_sha256_init(&s);
    ltx2_sha256_update(&s, CACHE_VERSION, sizeof CACHE_VERSION);
    if (variant) ltx2_sha256_update(&s, variant, strlen(variant) + 1);
    const char *small[2] = {"config.json", "tokenizer.model"};
    ltx2_status st = LTX2_OK;
    for (int i = 0; st == LTX2_OK && i < 2; i++) {
        char *p = ltx2_path_join(encoder_dir, small[i]);
        st = p ? hash_file(ctx, &s, p) : LTX2_ERROR(ctx, LTX2_ERR_OOM, "text cache: path");
        free(p);
    }
    ltx2_st_set *set = NULL;
    if (st == LTX2_OK) st = ltx2_st_set_open(ctx, encoder_dir, &set);
    for (size_t i = 0; st == LTX2_OK && i < set->n_files; i++) st = hash_weights(ctx, &s, set->files[i]->path);
    ltx2_st_set_close(set);
    if (st != LTX2_OK) return st;
    ltx2_sha256_hex(&s, out->fingerprint);
    return LTX2_OK;
}

void ltx2_text_cache_path(const ltx2_text_cache *c, const char *prompt, int64_t tokens, char *path, size_t cap) {
    ltx2_sha256 s;
    ltx2_sha256_init(&s);
    ltx2_sha256_update(&s, c->fingerprint, sizeof c->fingerprint);
    hash_u64(&s, (uint64_t)tokens);
    ltx2_sha256_update(&s, prompt, strlen(prompt));
    char key[65];
    ltx2_sha256_hex(&s, key);
    snprintf(path, cap, "%s/%s.safetensors", c->dir, key);
}

/* mkdir -p of dir (0777 before the umask). */
ltx2_status ltx2_text_cache_mkdir(ltx2_context *ctx, const char *dir) {
    char p[LTX2_TEXT_CACHE_PATH_CAP];
    if (snprintf(p, sizeof p, "%s", dir) >= (int)sizeof p)
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "text cache: directory name too long: %s", dir);
    for (char *q = p + 1;; q++) {
        const bool end = *q == '\0';
        if (*q == '/' || end) {
            *q = '\0';
            if (mkdir(p, 0777) != 0 && errno != EEXIST)
                return LTX2_ERROR(ctx, LTX2_ERR_IO, "text cache: cannot create %s: %s", p, strerror(errno));
            if (end) break;
            *q = '/';
        }
    }
    if (!ltx2_path_is_dir(dir)) return LTX2_ERROR(ctx, LTX2_ERR_IO, "text cache: %s is not a directory", dir);
    return LTX2_OK;
}

void ltx2_text_cache_touch(const char *path) { (void)utimensat(AT_FDCWD, path, NULL, 0); }

/* ltx2_text_cache_path's file names: 64 lowercase hex digits then ".safetensors" (a writer's
 * temporary file, "<name>.tmp.<pid>", is not one). */
#define ENTRY_HEX 64
#define ENTRY_SUFFIX ".safetensors"

static bool is_entry(const char *name) {
    for (int i = 0; i < ENTRY_HEX; i++)
        if (!((name[i] >= '0' && name[i] <= '9') || (name[i] >= 'a' && name[i] <= 'f'))) return false;
    return !strcmp(name + ENTRY_HEX, ENTRY_SUFFIX);
}

typedef struct cache_entry {
    char name[ENTRY_HEX + sizeof ENTRY_SUFFIX];
    uint64_t bytes;
    struct timespec used;
} cache_entry;

/* Least recently used first; equal times by name, so a trim is the same on every run. */
static int by_use(const void *a, const void *b) {
    const cache_entry *x = a, *y = b;
    if (x->used.tv_sec != y->used.tv_sec) return x->used.tv_sec < y->used.tv_sec ? -1 : 1;
    if (x->used.tv_nsec != y->used.tv_nsec) return x->used.tv_nsec < y->used.tv_nsec ? -1 : 1;
    return strcmp(x->name, y->name);
}

static bool kept(const char *name, const char *const *keep, int n_keep) {
    for (int i = 0; i < n_keep; i++) {
        const char *base = strrchr(keep[i], '/');
        if (!strcmp(base ? base + 1 : keep[i], name)) return true;
    }
    return false;
}

ltx2_status ltx2_text_cache_trim(ltx2_context *ctx, const char *dir, uint64_t max_bytes, const char *const *keep,
                                 int n_keep, int *removed, uint64_t *freed) {
    if (removed) *removed = 0;
    if (freed) *freed = 0;
    DIR *d = opendir(dir);
    if (!d) return LTX2_ERROR(ctx, LTX2_ERR_IO, "text cache: %s: %s", dir, strerror(errno));
    cache_entry *e = NULL;
    size_t n = 0, cap = 0;
    uint64_t total = 0;
    ltx2_status st = LTX2_OK;
    for (struct dirent *de; st == LTX2_OK && (de = readdir(d));) {
        struct stat sb;
        if (!is_entry(de->d_name) || fstatat(dirfd(d), de->d_name, &sb, AT_SYMLINK_NOFOLLOW) != 0 ||
            !S_ISREG(sb.st_mode))
            continue; /* not ours, or gone since the listing (another run's trim) */
        if (n == cap) {
            cache_entry *m = realloc(e, (cap = cap ? 2 * cap : 64) * sizeof *e);
            if (!m) {
                st = LTX2_ERROR(ctx, LTX2_ERR_OOM, "text cache: listing %s", dir);
                break;
            }
            e = m;
        }
        memcpy(e[n].name, de->d_name, sizeof e[n].name); /* is_entry: exactly that long */
        e[n].bytes = (uint64_t)sb.st_size;
        e[n].used = sb.st_mtim;
        total += e[n++].bytes;
    }
    closedir(d);
    if (st == LTX2_OK && total > max_bytes) {
        qsort(e, n, sizeof *e, by_use);
        for (size_t i = 0; i < n && total > max_bytes; i++) {
            if (kept(e[i].name, keep, n_keep)) continue;
            char path[LTX2_TEXT_CACHE_PATH_CAP + sizeof e[i].name + 1];
            snprintf(path, sizeof path, "%s/%s", dir, e[i].name);
            if (unlink(path) != 0 && errno != ENOENT) {
                st = LTX2_ERROR(ctx, LTX2_ERR_IO, "text cache: cannot remove %s: %s", path, strerror(errno));
                break;
            }
            total -= e[i].bytes;
            if (removed) ++*removed;
            if (freed) *freed += e[i].bytes;
        }
    }
    free(e);
    return st;
}
