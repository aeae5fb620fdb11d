// Broadcasting add / mul over a merged broadcast plan (see src/cpu/broadcast.h): each thread
// handles V consecutive elements of the innermost dim; 16-byte vectors when every operand is
// either contiguous along it (aligned rows) or broadcast across it (stride 0).
#include "common.cuh"

struct ltx2_binary_plan {
    int ndim;
    int64_t shape[LTX2_KMAX_DIMS];
    int64_t sa[LTX2_KMAX_DIMS], sb[LTX2_KMAX_DIMS], so[LTX2_KMAX_DIMS];
};

template <typename T, int V, int OP>
__global__ void __launch_bounds__(LTX2_K_THREADS)
ltx2_binary_kernel(const T *a, const T *b, T *out, ltx2_binary_plan p, int64_t work) {
    const int last = p.ndim - 1;
    const int64_t inner_v = p.shape[last] / V;
    int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; t < work; t += stride) {
        int64_t i = (t % inner_v) * V, r = t / inner_v;
        int64_t oa = i * p.sa[last], ob = i * p.sb[last], oo = i * p.so[last];
        for (int d = last - 1; d >= 0; d--) {
            int64_t c = r % p.shape[d];
            r /= p.shape[d];
            oa += c * p.sa[d];
            ob += c * p.sb[d];
            oo += c * p.so[d];
        }
        float va[V], vb[V], vo[V];
        if (V == 1 || p.sa[last] != 0) {
            ltx2_load<V>(a + oa, va);
        } else {
            float s = ltx2_to_f32(a[oa]);
#pragma unroll
            for (int j = 0; j < V; j++) va[j] = s;
        }
        if (V == 1 || p.sb[last] != 0) {
            ltx2_load<V>(b + ob, vb);
        } else {
            float s = ltx2_to_f32(b[ob]);
#pragma unroll
            for (int j = 0; j < V; j++) vb[j] = s;
        }
#pragma unroll
        for (int j = 0; j < V; j++) vo[j] = OP == LTX2_KBINARY_ADD ? va[j] + vb[j] : va[j] * vb[j];
        ltx2_store<V>(out + oo, vo);
    }
}

// An operand can use V-wide vectors along the inner dim when it is broadcast across it, or when
// it is contiguous along it with V-aligned outer strides and an aligned base.
static bool ltx2_vec_ok(const void *ptr, const int64_t *strides, int ndim, int vn) {
    int last = ndim - 1;
    if (strides[last] == 0) return true;
    if (strides[last] != 1 || !ltx2_k_aligned16(ptr)) return false;
    for (int d = 0; d < last; d++)
        if (strides[d] % vn != 0) return false;
    return true;
}

template <typename T, int OP>
static void ltx2_binary_launch(cudaStream_t s, const T *a, const T *b, T *out,
                               const ltx2_binary_plan &p, int64_t numel) {
    const int VN = ltx2_vec<T>::n;
    int last = p.ndim - 1;
    bool vec = p.shape[last] % VN == 0 && p.so[last] == 1 && ltx2_vec_ok(out, p.so, p.ndim, VN) &&
               ltx2_vec_ok(a, p.sa, p.ndim, VN) && ltx2_vec_ok(b, p.sb, p.ndim, VN);
    if (vec) {
        int64_t work = numel / VN;
        ltx2_launch<ltx2_binary_kernel<T, ltx2_vec<T>::n, OP>>(ltx2_k_grid(work, LTX2_K_THREADS), LTX2_K_THREADS, 0, s,
            a, b, out, p, work);
    } else {
        ltx2_launch<ltx2_binary_kernel<T, 1, OP>>(ltx2_k_grid(numel, LTX2_K_THREADS), LTX2_K_THREADS, 0, s,
            a, b, out, p, numel);
    }
}

template <typename T>
static int ltx2_binary_t(void *stream, int op, const void *a, const void *b, void *out,
                         const ltx2_binary_plan &p, int64_t numel) {
    cudaStream_t s = (cudaStream_t)stream;
    if (op == LTX2_KBINARY_ADD)
        ltx2_binary_launch<T, LTX2_KBINARY_ADD>(s, (const T *)a, (const T *)b, (T *)out, p, numel);
    else if (op == LTX2_KBINARY_MUL)
        ltx2_binary_launch<T, LTX2_KBINARY_MUL>(s, (const T *)a, (const T *)b, (T *)out, p, numel);
    else
        LTX2_K_BAD_ARG();
    LTX2_K_RETURN_LAUNCH();
}

extern "C" int ltx2_k_binary(void *stream, int dtype, int op, const void *a, const void *b,
                             void *out, int ndim, const int64_t *shape, const int64_t *a_strides,
                             const int64_t *b_strides, const int64_t *out_strides) {
    if (ndim < 1 || ndim > LTX2_KMAX_DIMS || !shape || !a_strides || !b_strides || !out_strides)
        LTX2_K_BAD_ARG();
    ltx2_binary_plan p;
    p.ndim = ndim;
    int64_t numel = 1;
    for (int d = 0; d < LTX2_KMAX_DIMS; d++) {
        bool used = d < ndim;
        p.shape[d] = used ? shape[d] : 1;
        p.sa[d] = used ? a_strides[d] : 0;
        p.sb[d] = used ? b_strides[d] : 0;
        p.so[d] = used ? out_strides[d] : 0;
        if (p.shape[d] < 0) LTX2_K_BAD_ARG();
        numel *= p.shape[d];
    }
    if (numel == 0) return 0;
    if (!a || !b || !out) LTX2_K_BAD_ARG();
    if (dtype == LTX2_KDT_F32) return ltx2_binary_t<float>(stream, op, a, b, out, p, numel);
    if (dtype == LTX2_KDT_BF16) return ltx2_binary_t<__nv_bfloat16>(stream, op, a, b, out, p, numel);
    LTX2_K_BAD_ARG();
}
