/* File-system helpers for the io modules: whole-file reads, read-only mappings, temp-file +
 * rename writes, path joins and sorted directory listings. POSIX only. */

#include "io/file.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/context.h"

/* read()/write() move at most this much per call; Linux caps a single call near 2 GiB anyway. */
#define LTX2_FILE_IO_CHUNK ((size_t)1 << 30)

static char *dup_str(const char *s) {
    size_t n = strlen(s) + 1;
    char *p = malloc(n);
    if (p) memcpy(p, s, n);
    return p;
}

ltx2_status ltx2_file_read_all(ltx2_context *ctx, const char *path, char **out, size_t *size) {
    *out = NULL;
    *size = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return LTX2_ERROR(ctx, LTX2_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    struct stat sb;
    if (fstat(fd, &sb) != 0) {
        int e = errno;
        close(fd);
        return LTX2_ERROR(ctx, LTX2_ERR_IO, "%s: cannot stat: %s", path, strerror(e));
    }
    if (!S_ISREG(sb.st_mode)) {
        close(fd);
        return LTX2_ERROR(ctx, LTX2_ERR_IO, "%s: not a regular file", path);
    }
    if ((uint64_t)sb.st_size >= (uint64_t)SIZE_MAX) {
        close(fd);
        return LTX2_ERROR(ctx, LTX2_ERR_IO, "%s: too large to read into memory", path);
    }
    size_t n = (size_t)sb.st_size;
    char *buf = malloc(n + 1);
    if (!buf) {
        close(fd);
        return LTX2_ERROR(ctx, LTX2_ERR_OOM, "%s: cannot allocate %zu bytes to read it", path, n + 1);
    }
    size_t got = 0;
    while (got < n) {
        size_t want = n - got < LTX2_FILE_IO_CHUNK ? n - got : LTX2_FILE_IO_CHUNK;
        ssize_t r = read(fd, buf + got, want);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) {
            int e = r < 0 ? errno : 0;
            close(fd);
            free(buf);
            return LTX2_ERROR(ctx, LTX2_ERR_IO, "%s: read failed after %zu of %zu bytes: %s", path,
                              got, n, e ? strerror(e) : "unexpected end of file");
        }
        got += (size_t)r;
    }
    close(fd);
    buf[n] = '\0';
    *out = buf;
    *size = n;
    return LTX2_OK;
}

ltx2_status ltx2_file_map_open(ltx2_context *ctx, const char *path, ltx2_file_map *out) {
    out->data = NULL;
    out->size = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return LTX2_ERROR(ctx, LTX2_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    struct stat sb;
    if (fstat(fd, &sb) != 0) {
        int e = errno;
        close(fd);
        return LTX2_ERROR(ctx, LTX2_ERR_IO, "%s: cannot stat: %s", path, strerror(e));
    }
    if (!S_ISREG(sb.st_mode)) {
        close(fd);
        return LTX2_ERROR(ctx, LTX2_ERR_IO, "%s: not a regular file", path);
    }
    if ((uint64_t)sb.st_size > (uint64_t)SIZE_MAX) {
        close(fd);
        return LTX2_ERROR(ctx, LTX2_ERR_IO, "%s: too large to map", path);
    }
    size_t n = (size_t)sb.st_size;
    if (n == 0) {
        close(fd);
        return LTX2_OK;
    }
    void *p = mmap(NULL, n, PROT_READ, MAP_PRIVATE, fd, 0);
    int e = errno;
    close(fd); /* the mapping keeps the file alive */
    if (p == MAP_FAILED)
        return LTX2_ERROR(ctx, LTX2_ERR_IO, "%s: mmap of %zu bytes failed: %s", path, n, strerror(e));
    out->data = p;
    out->size = n;
    return LTX2_OK;
}

void ltx2_file_map_close(ltx2_file_map *m) {
    if (m->data && m->size) munmap((void *)m->data, m->size);
    m->data = NULL;
    m->size = 0;
}

static void writer_clear(ltx2_file_writer *w) {
    free(w->path);
    free(w->tmp_path);
    w->path = w->tmp_path = NULL;
    w->fd = -1;
    w->written = 0;
}

void ltx2_tmp_path(char *buf, size_t cap, const char *path) {
    snprintf(buf, cap, "%s.tmp.%ld.%lx", path, (long)getpid(), (unsigned long)pthread_self());
}

ltx2_status ltx2_file_writer_open(ltx2_context *ctx, const char *path, ltx2_file_writer *w) {
    w->fd = -1;
    w->written = 0;
    w->path = dup_str(path);
    size_t cap = strlen(path) + LTX2_TMP_SUFFIX_CAP;
    w->tmp_path = malloc(cap);
    if (!w->path || !w->tmp_path) {
        writer_clear(w);
        return LTX2_ERROR(ctx, LTX2_ERR_OOM, "%s: out of memory", path);
    }
    ltx2_tmp_path(w->tmp_path, cap, path);
    w->fd = open(w->tmp_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (w->fd < 0) {
        int e = errno;
        ltx2_status st = LTX2_ERROR(ctx, LTX2_ERR_IO, "%s: cannot create temp file %s: %s", path,
                                    w->tmp_path, strerror(e));
        writer_clear(w);
        return st;
    }
    return LTX2_OK;
}

void ltx2_file_writer_abort(ltx2_file_writer *w) {
    if (w->fd >= 0) close(w->fd);
    if (w->tmp_path) unlink(w->tmp_path);
    writer_clear(w);
}

ltx2_status ltx2_file_writer_write(ltx2_context *ctx, ltx2_file_writer *w, const void *data,
                                   size_t n) {
    if (w->fd < 0) return LTX2_ERROR(ctx, LTX2_ERR_INTERNAL, "write on a closed file writer");
    const char *p = data;
    size_t done = 0;
    while (done < n) {
        size_t want = n - done < LTX2_FILE_IO_CHUNK ? n - done : LTX2_FILE_IO_CHUNK;
        ssize_t r = write(w->fd, p + done, want);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) {
            int e = r < 0 ? errno : ENOSPC;
            ltx2_status st = LTX2_ERROR(ctx, LTX2_ERR_IO, "%s: write failed at byte %llu: %s",
                                        w->path, (unsigned long long)(w->written + done), strerror(e));
            ltx2_file_writer_abort(w);
            return st;
        }
        done += (size_t)r;
    }
    w->written += n;
    return LTX2_OK;
}

ltx2_status ltx2_file_writer_zeros(ltx2_context *ctx, ltx2_file_writer *w, uint64_t n) {
    if (w->fd < 0) return LTX2_ERROR(ctx, LTX2_ERR_INTERNAL, "write on a closed file writer");
    if (!n) return LTX2_OK;
    /* ftruncate extends with zeros and moves no offset: seek past the hole for the next write */
    if (ftruncate(w->fd, (off_t)(w->written + n)) != 0 || lseek(w->fd, (off_t)(w->written + n), SEEK_SET) < 0) {
        ltx2_status st = LTX2_ERROR(ctx, LTX2_ERR_IO, "%s: extending to %llu bytes failed: %s", w->path,
                                    (unsigned long long)(w->written + n), strerror(errno));
        ltx2_file_writer_abort(w);
        return st;
    }
    w->written += n;
    return LTX2_OK;
}

ltx2_status ltx2_file_writer_commit(ltx2_context *ctx, ltx2_file_writer *w) {
    if (w->fd < 0) return LTX2_ERROR(ctx, LTX2_ERR_INTERNAL, "commit on a closed file writer");
    int rc = close(w->fd);
    w->fd = -1;
    if (rc != 0) {
        ltx2_status st = LTX2_ERROR(ctx, LTX2_ERR_IO, "%s: closing temp file failed: %s", w->path,
                                    strerror(errno));
        ltx2_file_writer_abort(w);
        return st;
    }
    if (rename(w->tmp_path, w->path) != 0) {
        ltx2_status st = LTX2_ERROR(ctx, LTX2_ERR_IO, "%s: renaming %s into place failed: %s",
                                    w->path, w->tmp_path, strerror(errno));
        ltx2_file_writer_abort(w);
        return st;
    }
    writer_clear(w);
    return LTX2_OK;
}

char *ltx2_path_join(const char *dir, const char *name) {
    size_t a = strlen(dir), b = strlen(name);
    while (a > 1 && dir[a - 1] == '/') a--;
    bool sep = a > 0 && dir[a - 1] != '/';
    char *p = malloc(a + (sep ? 1 : 0) + b + 1);
    if (!p) return NULL;
    memcpy(p, dir, a);
    if (sep) p[a++] = '/';
    memcpy(p + a, name, b + 1);
    return p;
}

char *ltx2_path_dirname(const char *path) {
    const char *slash = strrchr(path, '/');
    if (!slash) return dup_str(".");
    if (slash == path) return dup_str("/");
    size_t n = (size_t)(slash - path);
    char *p = malloc(n + 1);
    if (!p) return NULL;
    memcpy(p, path, n);
    p[n] = '\0';
    return p;
}

const char *ltx2_path_basename(const char *path) {
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

bool ltx2_path_is_dir(const char *path) {
    struct stat sb;
    return stat(path, &sb) == 0 && S_ISDIR(sb.st_mode);
}

bool ltx2_path_is_file(const char *path) {
    struct stat sb;
    return stat(path, &sb) == 0 && S_ISREG(sb.st_mode);
}

bool ltx2_str_ends_with(const char *s, const char *suffix) {
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && memcmp(s + a - b, suffix, b) == 0;
}

static int cmp_names(const void *a, const void *b) {
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

void ltx2_dir_list_free(char **names, size_t n) {
    if (!names) return;
    for (size_t i = 0; i < n; i++) free(names[i]);
    free(names);
}

ltx2_status ltx2_dir_list(ltx2_context *ctx, const char *dir, char ***names, size_t *n) {
    *names = NULL;
    *n = 0;
    DIR *d = opendir(dir);
    if (!d) return LTX2_ERROR(ctx, LTX2_ERR_IO, "%s: cannot open directory: %s", dir, strerror(errno));
    char **list = NULL;
    size_t count = 0, cap = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
        if (count == cap) {
            size_t ncap = cap ? cap * 2 : 16;
            char **nl = realloc(list, ncap * sizeof(*nl));
            if (!nl) goto oom;
            list = nl;
            cap = ncap;
        }
        list[count] = dup_str(e->d_name);
        if (!list[count]) goto oom;
        count++;
    }
    closedir(d);
    if (count) qsort(list, count, sizeof(*list), cmp_names);
    *names = list;
    *n = count;
    return LTX2_OK;
oom:
    closedir(d);
    ltx2_dir_list_free(list, count);
    return LTX2_ERROR(ctx, LTX2_ERR_OOM, "%s: out of memory listing the directory", dir);
}
