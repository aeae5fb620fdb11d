/* `ltx2 inspect --sharding PROFILE --mesh d,f,c,t FILE`: how a checkpoint's weights would be laid
 * out over a device mesh under one of MaxDiffusion's sharding profiles (src/dist/sharding.h):
 * per weight its per-dim mesh axes, per-rank shape and bytes, then the bytes each rank holds. */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "core/context.h"
#include "dist/sharding.h"
#include "io/safetensors.h"

/* Print one line per rank only up to this many ranks; bigger meshes get a summary line. */
#define SHARD_MAX_RANK_LINES 64

static void axes_str(const ltx2_shard_layout *l, char *buf, size_t cap) {
    size_t len = 0;
    buf[0] = 0;
    for (int d = 0; d < l->ndim && len + 1 < cap; d++) {
        int k = snprintf(buf + len, cap - len, "%s", d ? ", " : "[");
        if (k > 0) len += (size_t)k;
        if (l->n_mesh[d] == 0 || l->parts[d] == 1) {
            k = snprintf(buf + len, cap - len, "-");
            if (k > 0) len += (size_t)k;
        }
        else
            for (int j = 0; j < l->n_mesh[d] && len + 1 < cap; j++) {
                k = snprintf(buf + len, cap - len, "%s%s", j ? "*" : "", ltx2_mesh_axis_name(l->mesh[d][j]));
                if (k > 0) len += (size_t)k;
            }
    }
    if (len + 1 < cap) snprintf(buf + len, cap - len, "%s", l->ndim ? "]" : "[]");
}

int cli_inspect_sharding(ltx2_context *ctx, const char *profile, const char *mesh_text, const char *path) {
    const char *cmd = "inspect";
    ltx2_shard_profile prof;
    ltx2_mesh mesh;
#ifdef LTX2_HAVE_CUDA
    const ltx2_shard_hardware hw = LTX2_HW_GPU;
#else
    const ltx2_shard_hardware hw = LTX2_HW_CPU;
#endif
    if (ltx2_shard_profile_parse(ctx, profile, hw, &prof) != LTX2_OK ||
        ltx2_mesh_parse(ctx, mesh_text, &mesh) != LTX2_OK) {
        cli_report_error(cmd, ctx);
        return CLI_EXIT_BAD_INPUT;
    }
    ltx2_st_set *set = NULL;
    if (ltx2_st_set_open(ctx, path, &set) != LTX2_OK) {
        cli_report_error(cmd, ctx);
        return CLI_EXIT_BAD_INPUT;
    }
    int world = ltx2_mesh_world_size(&mesh);
    printf("sharding profile %s%s, mesh data=%d fsdp=%d context=%d tensor=%d (%d ranks)\n",
           ltx2_shard_profile_name(prof), strcmp(profile, "default") ? "" : " (from 'default')", mesh.size[0],
           mesh.size[1], mesh.size[2], mesh.size[3], world);
    printf("%-72s %-6s %-18s %-22s %-18s %s\n", "tensor", "dtype", "shape", "mesh axes", "per-rank shape", "per-rank bytes");
    double total = 0, per_rank = 0, sharded = 0;
    size_t unknown = 0, errors = 0;
    int rc = CLI_EXIT_OK;
    for (size_t i = 0; i < set->n_tensors; i++) {
        const ltx2_st_tensor *t = set->tensors[i];
        size_t es = ltx2_dtype_size(t->dtype);
        char shape[96], local[96], axes[96], hb[32];
        ltx2_shard_layout l;
        double bytes = (double)(t->end - t->begin);
        total += bytes;
        ltx2_shape_str(t->shape, t->ndim, shape, sizeof(shape));
        ltx2_status st = ltx2_shard_layout_of(ctx, prof, &mesh, t->name, t->ndim, t->shape, &l);
        if (st == LTX2_ERR_NOT_FOUND) {
            /* Not an LTX-2 weight we know: shown, counted as replicated, and reported below. */
            unknown++;
            per_rank += bytes;
            printf("%-72s %-6s %-18s %-22s %-18s %s\n", t->name, ltx2_dtype_name(t->dtype), shape, "(no rule)", shape,
                   cli_human_bytes(bytes, hb, sizeof(hb)));
            continue;
        }
        if (st != LTX2_OK) {
            errors++;
            fprintf(stderr, "ltx2 %s: error: %s\n", cmd, ltx2_last_error(ctx));
            continue;
        }
        double lb = (double)l.local_numel * (double)es;
        per_rank += lb;
        if (l.replicas < world) sharded += bytes;
        ltx2_shape_str(l.local_shape, l.ndim, local, sizeof(local));
        axes_str(&l, axes, sizeof(axes));
        printf("%-72s %-6s %-18s %-22s %-18s %s\n", t->name, ltx2_dtype_name(t->dtype), shape, axes, local,
               cli_human_bytes(lb, hb, sizeof(hb)));
    }
    char a[32], b[32], c[32];
    printf("\ntotal: %zu tensors, %s; sharded tensors: %s; per rank: %s (%.1f%% of the model)\n", set->n_tensors,
           cli_human_bytes(total, a, sizeof(a)), cli_human_bytes(sharded, b, sizeof(b)),
           cli_human_bytes(per_rank, c, sizeof(c)), total > 0 ? 100.0 * per_rank / total : 100.0);
    /* Splits are even (non-dividing dims are errors), so every rank holds the same bytes. */
    for (int r = 0; r < world && r < SHARD_MAX_RANK_LINES; r++) {
        int co[LTX2_AXIS_COUNT];
        ltx2_mesh_coords(&mesh, r, co);
        printf("rank %d (data %d, fsdp %d, context %d, tensor %d): %s\n", r, co[0], co[1], co[2], co[3],
               cli_human_bytes(per_rank, a, sizeof(a)));
    }
    if (world > SHARD_MAX_RANK_LINES) printf("... %d more ranks, %s each\n", world - SHARD_MAX_RANK_LINES, a);
    if (unknown)
        fprintf(stderr, "ltx2 %s: warning: %zu tensors match no sharding rule; counted as replicated\n", cmd, unknown);
    if (errors) {
        fprintf(stderr, "ltx2 %s: %zu tensors cannot be laid out on this mesh (see errors above)\n", cmd, errors);
        rc = CLI_EXIT_BAD_INPUT;
    }
    ltx2_st_set_close(set);
    return rc;
}
