/* src/backend/OPS.md, the index of ops by name, stays whole: every op of the table has a row, and
 * every file a row names exists, so a newcomer who follows it lands on the op's CPU reference,
 * kernel, tests and benches. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "backend/backend.h"
#include "test_util.h"

#define INDEX_PATH "/src/backend/OPS.md"
#define LINE_CAP 1024

/* The row of op `name` ("| `name` | ..."), copied into row; false when absent. */
static bool find_row(FILE *f, const char *name, char *row) {
    char want[96];
    snprintf(want, sizeof want, "| `%s` |", name);
    rewind(f);
    while (fgets(row, LINE_CAP, f))
        if (strncmp(row, want, strlen(want)) == 0) return true;
    return false;
}

/* Every backticked token of the row that looks like a path (holds a '/') must exist. */
static void check_paths(const char *op, const char *row) {
    const char *p = row;
    int n_paths = 0;
    while ((p = strchr(p, '`')) != NULL) {
        const char *e = strchr(p + 1, '`');
        if (!e) break;
        char tok[256];
        const size_t len = (size_t)(e - p - 1);
        if (len < sizeof tok) {
            memcpy(tok, p + 1, len);
            tok[len] = '\0';
            if (strchr(tok, '/')) {
                char path[1024];
                struct stat sb;
                snprintf(path, sizeof path, "%s/%s", LTX2_SOURCE_DIR, tok);
                CHECK(stat(path, &sb) == 0, "OPS.md row %s names %s, which does not exist", op, tok);
                n_paths++;
            }
        }
        p = e + 1;
    }
    CHECK(n_paths >= 2, "OPS.md row %s names %d files (a reference or kernel, and a test, at least)", op, n_paths);
}

int main(void) {
    FILE *f = fopen(LTX2_SOURCE_DIR INDEX_PATH, "r");
    CHECK(f != NULL, "cannot open %s", LTX2_SOURCE_DIR INDEX_PATH);
    if (!f) return test_finish();
    char row[LINE_CAP];
    for (int i = 0; i < LTX2_OP_COUNT; i++) {
        const char *name = ltx2_op_name((ltx2_op)i);
        const bool found = find_row(f, name, row);
        CHECK(found, "OPS.md has no row for op %s", name);
        if (found) check_paths(name, row);
    }
    fclose(f);
    return test_finish();
}
