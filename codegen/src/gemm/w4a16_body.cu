// ---------------------------------------------------------------------------------------------
// W4A16 body (codegen/src/gemm/w4a16_body.cu, shared by every W4A16 plan; the constants, index
// macros, swizzle, mma wrapper and LC_W4_SCHEDULE above it are the plan's, validated).
//
// CTA = 4 warps: LC_BN columns of C over the K-range [split * LC_KS, (split + 1) * LC_KS).
// A's K-range goes to shared memory once (cp.async, LC_SB superblocks of the plan's a_s, rows
// >= M zero-filled); W streams with 16-byte loads, LC_W_DEPTH - 1 superblocks ahead of the one
// being multiplied; each B register is dequantized from one byte (two signed nibbles) of a W word:
// prmt puts the byte in both halves, one lop3 places the low nibble in the low half's mantissa
// and the high nibble in bits 4..7 of the high half's, flipping the sign bit (0x6408 / 0x6480),
// fma.f16x2 (x * {1, 1/16} + {-1032, -72}) recovers the signed values exactly, mul.f16x2 applies
// the scale (one rounding, as q * s in f16). Each split stores its f32 partial tile in the
// workspace; the last CTA of the column tile sums the partials in split order and stores C.
// ---------------------------------------------------------------------------------------------

struct __align__(16) lc_v4 {
    unsigned x, y, z, w;
};

__device__ __forceinline__ unsigned lc_smem_addr(const void* p) {
    return (unsigned)__cvta_generic_to_shared(p);
}
__device__ __forceinline__ void lc_cp_async16(unsigned dst, const void* src, unsigned src_bytes) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(dst), "l"(src),
                 "r"(src_bytes)
                 : "memory");
}
__device__ __forceinline__ void lc_cp_commit() {
    asm volatile("cp.async.commit_group;" ::: "memory");
}
__device__ __forceinline__ void lc_cp_wait_all() {
    asm volatile("cp.async.wait_group 0;" ::: "memory");
}
__device__ __forceinline__ void lc_ldsm_x4(unsigned (&r)[4], unsigned addr) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(addr));
}
// 16 bytes of W, read once: no L1 allocation.
__device__ __forceinline__ lc_v4 lc_ldg_stream(const unsigned* p) {
    lc_v4 v;
    asm("ld.global.nc.L1::no_allocate.v4.b32 {%0, %1, %2, %3}, [%4];"
        : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
        : "l"(p));
    return v;
}
__device__ __forceinline__ unsigned lc_word(const lc_v4& v, int w) {
    return w == 0 ? v.x : w == 1 ? v.y : w == 2 ? v.z : v.w;
}
// Byte `b` of `word` (two signed int4: low nibble -> low half) as f16x2, times s2 (f16x2).
__device__ __forceinline__ unsigned lc_dq(unsigned word, int b, unsigned s2) {
    const unsigned d = __byte_perm(word, 0u, 0x4040u + 0x0101u * (unsigned)b);
    const unsigned x = (d & 0x00F0000Fu) ^ 0x64806408u;
    unsigned r;
    asm("fma.rn.f16x2 %0, %1, %2, %3;" : "=r"(r) : "r"(x), "r"(0x2C003C00u), "r"(0xD480E408u));
    asm("mul.rn.f16x2 %0, %1, %2;" : "=r"(r) : "r"(r), "r"(s2));
    return r;
}

#define LC_LDSM_A(g) lc_ldsm_x4(af[g], sa + a_lo[g])
#define LC_W4_MMA(ci, g, j, w0, b0, w1, b1)                                                     \
    lc_mma(acc[ci], acc[ci + 1], acc[ci + 2], acc[ci + 3], af[g][0], af[g][1], af[g][2],      \
           af[g][3], lc_dq(lc_word(wv[j], w0), b0, sv[j]), lc_dq(lc_word(wv[j], w1), b1, sv[j]))

// The 16-byte W vectors of this thread for the superblock starting at k.
__device__ __forceinline__ void lc_load_w(const unsigned* __restrict__ W, lc_v4 (&wv)[LC_WV],
                                          int n0, int k, int t) {
#pragma unroll
    for (int j = 0; j < LC_WV; ++j) {
        const long long n = (long long)n0 + LC_W_ROW(t, j);
        const long long kk = (long long)k + LC_W_K(t, j);
        wv[j] = lc_ldg_stream(W + LC_W_GOFF(n, kk) / 8);
    }
}

// One superblock: scales, then the plan's schedule of ldmatrix and mma.
__device__ __forceinline__ void lc_superblock(const lc_v4 (&wv)[LC_WV],
                                              const lc_elem* __restrict__ S, unsigned sa,
                                              const unsigned (&a_lo)[LC_A_GROUPS],
                                              float (&acc)[LC_ACC], int n0, int k, int t) {
    const long long g = k / LC_GROUP;
    unsigned sv[LC_WV];
#pragma unroll
    for (int j = 0; j < LC_WV; ++j) {
        const long long n = (long long)n0 + LC_S_N(t, j);
        const unsigned s = S[LC_S_GOFF(n, g)];
        sv[j] = s | (s << 16);
    }
    unsigned af[LC_A_GROUPS][4];
    LC_W4_SCHEDULE
}

extern "C" __global__ void __launch_bounds__(LC_THREADS)
    laycert_w4a16(const lc_elem* __restrict__ A, const unsigned* __restrict__ W,
                  const lc_elem* __restrict__ S, lc_elem* __restrict__ C, float* __restrict__ ws,
                  unsigned* __restrict__ counters) {
    extern __shared__ __align__(1024) unsigned char lc_dyn_smem[];
    __shared__ int lc_last;
    const unsigned base = (lc_smem_addr(lc_dyn_smem) + 1023u) & ~1023u;
    const int t = threadIdx.x;
    const int tile = blockIdx.x % LC_TILES_N;
    const int split = blockIdx.x / LC_TILES_N;
    const int n0 = tile * LC_BN;
    const int k0 = split * LC_KS;

    // The weight stream starts first: the first LC_W_DEPTH - 1 superblocks.
#if LC_W_DEPTH == 3
    lc_v4 w0[LC_WV], w1[LC_WV], w2[LC_WV];
    lc_load_w(W, w0, n0, k0, t);
    if (1 < LC_SB) lc_load_w(W, w1, n0, k0 + 128, t);
#else
    lc_v4 w0[LC_WV], w1[LC_WV];
    lc_load_w(W, w0, n0, k0, t);
#endif

    // A's K-range into shared memory, superblock by superblock in the plan's a_s layout.
    for (int sb = 0; sb < LC_SB; ++sb) {
#pragma unroll
        for (int j = 0; j < LC_A_CHUNKS; ++j) {
            const int r = LC_A_CP_ROW(t, j);
            const int k = LC_A_CP_K(t, j);
            const long long gr = r;
            const int gk = k0 + sb * 128 + k;
            const bool in = LC_A_GUARD(gr, gk);
            const lc_elem* src = in ? A + LC_A_GOFF(gr, gk) : A;
            lc_cp_async16(base + sb * LC_A_SB_BYTES + 2u * (unsigned)lc_swz_a(LC_A_SLIN(r, k)), src,
                          in ? 16u : 0u);
        }
    }
    lc_cp_commit();
    unsigned a_lo[LC_A_GROUPS];
#pragma unroll
    for (int g = 0; g < LC_A_GROUPS; ++g) {
        const int r = LC_A_LDSM_ROW(t, g);
        const int k = LC_A_LDSM_K(t, g);
        a_lo[g] = 2u * (unsigned)lc_swz_a(LC_A_SLIN(r, k));
    }
    float acc[LC_ACC];
#pragma unroll
    for (int i = 0; i < LC_ACC; ++i) acc[i] = 0.0f;
    lc_cp_wait_all();
    __syncthreads();

    // W buffers rotate: superblock sb + LC_W_DEPTH - 1 is in flight while sb is multiplied.
#if LC_W_DEPTH == 3
#pragma unroll 1
    for (int sb = 0; sb < LC_SB; sb += 3) {
        if (sb + 2 < LC_SB) lc_load_w(W, w2, n0, k0 + (sb + 2) * 128, t);
        lc_superblock(w0, S, base + sb * LC_A_SB_BYTES, a_lo, acc, n0, k0 + sb * 128, t);
        if (sb + 1 >= LC_SB) break;
        if (sb + 3 < LC_SB) lc_load_w(W, w0, n0, k0 + (sb + 3) * 128, t);
        lc_superblock(w1, S, base + (sb + 1) * LC_A_SB_BYTES, a_lo, acc, n0, k0 + (sb + 1) * 128, t);
        if (sb + 2 >= LC_SB) break;
        if (sb + 4 < LC_SB) lc_load_w(W, w1, n0, k0 + (sb + 4) * 128, t);
        lc_superblock(w2, S, base + (sb + 2) * LC_A_SB_BYTES, a_lo, acc, n0, k0 + (sb + 2) * 128, t);
    }
#else
#pragma unroll 1
    for (int sb = 0; sb < LC_SB; sb += 2) {
        if (sb + 1 < LC_SB) lc_load_w(W, w1, n0, k0 + (sb + 1) * 128, t);
        lc_superblock(w0, S, base + sb * LC_A_SB_BYTES, a_lo, acc, n0, k0 + sb * 128, t);
        if (sb + 1 >= LC_SB) break;
        if (sb + 2 < LC_SB) lc_load_w(W, w0, n0, k0 + (sb + 2) * 128, t);
        lc_superblock(w1, S, base + (sb + 1) * LC_A_SB_BYTES, a_lo, acc, n0, k0 + (sb + 1) * 128, t);
    }
#endif

    // This split's partial tile (rows < M) into the workspace.
#pragma unroll
    for (int v = 0; v < LC_ACC; v += 2) {
        const int r = LC_C_ROW(t, v);
        const long long c = (long long)n0 + LC_C_COL(t, v);
        const long long p = split;
        if (LC_C_GUARD(r, c)) {
            asm volatile("st.global.v2.f32 [%0], {%1, %2};" ::"l"(ws + LC_WS_OFF(p, r, c)),
                         "f"(acc[v]), "f"(acc[v + 1])
                         : "memory");
        }
    }
    __threadfence();
    __syncthreads();
    if (t == 0) lc_last = atomicAdd(&counters[tile], 1u) == (unsigned)(LC_SPLITS - 1);
    __syncthreads();
    if (!lc_last) return;
    __threadfence();
    // The last CTA of the column tile: partials summed in split order, converted, stored.
#pragma unroll
    for (int i = 0; i < LC_R_ITERS; ++i) {
        const int r = LC_R_ROW(t, i);
        const long long c = (long long)n0 + LC_R_COL(t, i);
        if (LC_C_GUARD(r, c)) {
            float x = 0.0f, y = 0.0f;
            for (long long p = 0; p < LC_SPLITS; ++p) {
                float a, b;
                asm volatile("ld.global.cg.v2.f32 {%0, %1}, [%2];"
                             : "=f"(a), "=f"(b)
                             : "l"(ws + LC_WS_OFF(p, r, c))
                             : "memory");
                x += a;
                y += b;
            }
            unsigned h;
            asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(h) : "f"(y), "f"(x));
            *reinterpret_cast<unsigned*>(C + LC_C_GOFF(r, c)) = h;
        }
    }
    if (t == 0) counters[tile] = 0u;
}
