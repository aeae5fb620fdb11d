/* The PNG frame directory rules `generate` and `decode` share: a directory that already holds files
 * is refused unless --overwrite, which first removes the frame_*.png an earlier run left (a shorter
 * run would otherwise leave the longer one's last frames behind). */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"

/* Paths longer than this are not ours to clean. */
#define FRAMES_PATH_CAP 4096

/* Entries of dir other than . and .. (-1 when it cannot be read, 0 when it does not exist). */
long cli_dir_entries(const char *dir) {
    DIR *d = opendir(dir);
    if (!d) return errno == ENOENT ? 0 : -1;
    long n = 0;
    for (struct dirent *e; (e = readdir(d));) n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
    closedir(d);
    return n;
}

/* Removes dir/frame_*.png (what a run writes there). */
void cli_remove_frames(const char *dir) {
    DIR *d = opendir(dir);
    if (!d) return;
    for (struct dirent *e; (e = readdir(d));) {
        const size_t n = strlen(e->d_name);
        if (n > 10 && !strncmp(e->d_name, "frame_", 6) && !strcmp(e->d_name + n - 4, ".png")) {
            char path[FRAMES_PATH_CAP];
            if (snprintf(path, sizeof path, "%s/%s", dir, e->d_name) < (int)sizeof path) unlink(path);
        }
    }
    closedir(d);
}

