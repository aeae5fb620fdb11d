/* The PNG frame directory rules `generate` and `decode` share: a directory that already holds files
 * is refused unless --overwrite, which first removes the frame_*.png an earlier run left (a shorter
 * run would otherwise leave the longer one's last frames behind). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "io/file.h"

long cli_dir_entries(const char *dir) {
    if (!ltx2_path_is_dir(dir)) return 0;
    char **names = NULL;
    size_t n = 0;
    if (ltx2_dir_list(NULL, dir, &names, &n) != LTX2_OK) return -1;
    ltx2_dir_list_free(names, n);
    return (long)n;
}

void cli_remove_frames(const char *dir) {
    char **names = NULL;
    size_t n = 0;
    if (!ltx2_path_is_dir(dir) || ltx2_dir_list(NULL, dir, &names, &n) != LTX2_OK) return;
    for (size_t i = 0; i < n; i++) {
        const size_t len = strlen(names[i]);
        if (len > 10 && !strncmp(names[i], "frame_", 6) && !strcmp(names[i] + len - 4, ".png")) {
            char *path = ltx2_path_join(dir, names[i]);
            if (path) unlink(path);
            free(path);
        }
    }
    ltx2_dir_list_free(names, n);
}
